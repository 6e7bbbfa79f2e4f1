package uctest_test

import (
	"bytes"
	"encoding/json"
	"github.com/deltasync/deltasync/catalog/uctest"
	"io"
	"net/http"
	"strings"
	"testing"
)

type result struct {
	status int
	body   []byte
	json   map[string]any
}

func do(t testing.TB, method, url string, body any, headers ...string) result {
	t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := result{status: res.StatusCode, body: b}
	if len(bytes.TrimSpace(b)) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &r.json); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, url, b)
		}
	}
	return r
}

func (r result) errType() string {
	e, _ := r.json["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func (r result) errMessage() string {
	e, _ := r.json["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func (r result) md() map[string]any {
	m, _ := r.json["metadata"].(map[string]any)
	return m
}

func (r result) props() map[string]any {
	p, _ := r.md()["properties"].(map[string]any)
	return p
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

func upd(uuid, etag string, actions ...map[string]any) map[string]any {
	reqs := []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}}
	if etag != "" {
		reqs = append(reqs, map[string]any{"type": "assert-etag", "etag": etag})
	}
	ups := []any{}
	for _, a := range actions {
		ups = append(ups, a)
	}
	return map[string]any{"requirements": reqs, "updates": ups}
}

func setProps(kv ...string) map[string]any {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return map[string]any{"action": "set-properties", "updates": m}
}

// fixture is a server with catalog c, schema s and an EXTERNAL table t.
type fixture struct {
	srv        *uctest.Server
	tables     string // .../delta/v1/catalogs/c/schemas/s/tables
	uuid, etag string
}

func newFixture(t *testing.T, opts ...uctest.Option) *fixture {
	t.Helper()
	s := newTestServer(t, opts...)
	s.AddSchema("c", "s")
	f := &fixture{srv: s, tables: s.URL() + "/delta/v1/catalogs/c/schemas/s/tables"}
	r := do(t, "POST", f.tables, extCreate("t", "file://"+t.TempDir()))
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	f.uuid, f.etag = r.md()["table-uuid"].(string), r.md()["etag"].(string)
	return f
}
