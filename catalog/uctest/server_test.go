package uctest_test

import (
	"strings"
	"testing"
)

func TestSmoke(t *testing.T) {
	s := newTestServer(t)
	s.AddSchema("c", "s")
	base := s.URL()
	r := do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables", extCreate("t", t.TempDir()+"/"))
	code, resp := r.status, r.json
	if code != 200 {
		t.Fatalf("create: %d %v", code, resp)
	}
	md := resp["metadata"].(map[string]any)
	if c, ok := resp["commits"].([]any); !ok || len(c) != 0 {
		t.Errorf("EXTERNAL create: commits %v, want [] (as the real server)", resp["commits"])
	}
	if _, ok := resp["latest-table-version"]; ok {
		t.Errorf("EXTERNAL create has latest-table-version")
	}
	props := md["properties"].(map[string]any)
	if props["delta.lastUpdateVersion"] != "0" || props["delta.minWriterVersion"] != "2" {
		t.Errorf("props %v", props)
	}
	uuid, etag := md["table-uuid"].(string), md["etag"].(string)
	up := map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-etag", "etag": etag}},
		"updates":      []any{map[string]any{"action": "set-properties", "updates": map[string]string{"a": "1"}}},
	}
	r = do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables/t", up)
	code, resp = r.status, r.json
	if code != 200 {
		t.Fatalf("update: %d %v", code, resp)
	}
	if e2 := resp["metadata"].(map[string]any)["etag"]; e2 == etag {
		t.Errorf("etag did not roll on a no-op set-properties")
	}
	r = do(t, "POST", base+"/delta/v1/catalogs/c/schemas/s/tables/t", up)
	code, resp = r.status, r.json
	if code != 409 || !strings.Contains(resp["error"].(map[string]any)["message"].(string), "assert-etag failed") {
		t.Errorf("stale etag: %d %v", code, resp)
	}
	r = do(t, "GET", base+"/tables/c.s.t", nil)
	code, resp = r.status, r.json
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
