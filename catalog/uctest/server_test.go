package uctest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func do(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, url, b)
		}
	}
	return res.StatusCode, m
}

func extCreate(name, loc string) map[string]any {
	return map[string]any{
		"name": name, "location": loc, "table-type": "EXTERNAL",
		"columns": map[string]any{"type": "struct", "fields": []any{
			map[string]any{"name": "id", "type": "long", "nullable": false, "metadata": map[string]any{"comment": "key"}},
			map[string]any{"name": "tags", "type": map[string]any{"type": "array", "element-type": "string", "contains-null": true}, "nullable": true, "metadata": map[string]any{}},
		}},
		"partition-columns":        []string{"id"},
		"protocol":                 map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties":               map[string]string{"a": "1"},
		"last-commit-timestamp-ms": 1700000000000,
	}
}

func TestSmoke(t *testing.T) {
	s := NewForTest(t)
	s.AddSchema("c", "s")
	base := s.URL()
	code, resp := do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables", extCreate("t", t.TempDir()+"/"))
	if code != 200 {
		t.Fatalf("create: %d %v", code, resp)
	}
	md := resp["metadata"].(map[string]any)
	if _, ok := resp["commits"]; ok {
		t.Errorf("EXTERNAL load has commits")
	}
	props := md["properties"].(map[string]any)
	if props["delta.lastUpdateVersion"] != "0" || props["delta.minWriterVersion"] != "2" {
		t.Errorf("props %v", props)
	}
	uuid, etag := md["table-uuid"].(string), md["etag"].(string)
	upd := map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-etag", "etag": etag}},
		"updates":      []any{map[string]any{"action": "set-properties", "updates": map[string]string{"a": "1"}}},
	}
	code, resp = do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables/t", upd)
	if code != 200 {
		t.Fatalf("update: %d %v", code, resp)
	}
	if e2 := resp["metadata"].(map[string]any)["etag"]; e2 == etag {
		t.Errorf("etag did not roll on a no-op set-properties")
	}
	code, resp = do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables/t", upd)
	if code != 409 || !strings.Contains(resp["error"].(map[string]any)["message"].(string), "assert-etag failed") {
		t.Errorf("stale etag: %d %v", code, resp)
	}
	code, resp = do(t, "GET", base+"/tables/c.s.t", nil)
	if code != 200 {
		t.Fatalf("get: %d %v", code, resp)
	}
	cols := resp["columns"].([]any)
	c0 := cols[0].(map[string]any)
	if c0["type_text"] != "bigint" || c0["type_json"] != `{"name":"id","type":"long","nullable":false,"metadata":{"comment":"key"}}` || c0["comment"] != "key" || c0["partition_index"] != 0.0 {
		t.Errorf("column 0: %v", c0)
	}
	c1 := cols[1].(map[string]any)
	if c1["type_text"] != "array<string>" || c1["type_json"] != `{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}` {
		t.Errorf("column 1: %v", c1)
	}
	if v := s.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}
