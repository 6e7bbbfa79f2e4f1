package uctest_test

import (
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"strings"
	"testing"
)

func TestSpecViolationsAreRejectedAndRecorded(t *testing.T) {
	cases := []struct {
		name   string
		method string
		path   string // after the base URL
		body   any
		status int
		want   string // substring of the recorded violation
	}{
		{"create without protocol", "POST", "/delta/v1/catalogs/c/schemas/s/tables", map[string]any{
			"name": "x", "location": "file:///tmp/x", "table-type": "EXTERNAL", "properties": map[string]string{},
			"columns": map[string]any{"type": "struct", "fields": []any{}}, "last-commit-timestamp-ms": 1}, 400, "protocol"},
		{"bad table-type enum", "POST", "/delta/v1/catalogs/c/schemas/s/tables", map[string]any{
			"name": "x", "location": "file:///tmp/x", "table-type": "VIEW", "properties": map[string]string{},
			"protocol":                 map[string]any{"min-reader-version": 1, "min-writer-version": 2},
			"columns":                  map[string]any{"type": "struct", "fields": []any{}},
			"last-commit-timestamp-ms": 1}, 400, "table-type"},
		{"empty updates", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", map[string]any{
			"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": "00000000-0000-4000-8000-000000000000"}}, "updates": []any{}}, 400, "updates"},
		{"unknown action", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", upd("00000000-0000-4000-8000-000000000000", "", map[string]any{"action": "drop-everything"}), 400, "unknown update action"},
		{"unknown requirement", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", map[string]any{
			"requirements": []any{map[string]any{"type": "assert-owner"}}, "updates": []any{setProps("a", "1")}}, 400, "unknown requirement type"},
		{"uuid missing", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", map[string]any{
			"requirements": []any{map[string]any{"type": "assert-table-uuid"}}, "updates": []any{setProps("a", "1")}}, 400, "without uuid"},
		{"config without protocol-versions", "GET", "/delta/v1/config?catalog=c", nil, 400, "protocol-versions"},
		{"credentials with a bad operation", "GET", "/delta/v1/catalogs/c/schemas/s/tables/t/credentials?operation=WRITE", nil, 400, "operation"},
		{"list tables above the definition's max_results", "GET", "/tables?catalog_name=c&schema_name=s&max_results=60", nil, 400, "max_results"},
		{"unknown field in an action", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", upd("00000000-0000-4000-8000-000000000000", "",
			map[string]any{"action": "set-properties", "updates": map[string]string{"a": "1"}, "extra": 1}), 400, `"updates[0].extra"`},
		{"unknown field in a nested column", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", upd("00000000-0000-4000-8000-000000000000", "",
			map[string]any{"action": "set-columns", "columns": map[string]any{"type": "struct", "fields": []any{
				map[string]any{"name": "a", "type": map[string]any{"type": "array", "element-type": "long", "contains-null": true, "x": 1}, "nullable": true, "metadata": map[string]any{"any": "thing"}}}}}), 400, `"updates[0].columns.fields[0].type.x"`},
		{"unknown field in create", "POST", "/delta/v1/catalogs/c/schemas/s/tables", map[string]any{
			"name": "x", "location": "file:///tmp/x", "table-type": "EXTERNAL", "properties": map[string]string{}, "owner": "me",
			"protocol":                 map[string]any{"min-reader-version": 1, "min-writer-version": 2},
			"columns":                  map[string]any{"type": "struct", "fields": []any{map[string]any{"name": "a", "type": "long", "nullable": true, "metadata": map[string]any{}}}},
			"last-commit-timestamp-ms": 1}, 400, `"owner"`},
		{"uuid that is not a UUID", "POST", "/delta/v1/catalogs/c/schemas/s/tables/t", upd("nope", "", setProps("a", "1")), 400, "is not a UUID"},
		{"path not in the definitions", "GET", "/delta/v1/catalogs/c/schemas/s/tables", nil, 405, "not in the API definition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			r := do(t, c.method, f.srv.URL()+c.path, c.body, uctest.ExpectViolationHeader, "1")
			if r.status != c.status {
				t.Errorf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			v := f.srv.ExpectedViolations()
			if len(v) != 1 || !strings.Contains(v[0], c.want) {
				t.Errorf("recorded %q, want one mentioning %q", v, c.want)
			}
		})
	}
}

func TestViolationsWithoutHeader(t *testing.T) {
	s := uctest.NewServer(spectest.WithSpec(testSpec))
	defer s.Close()
	r := do(t, "POST", s.URL()+"/catalogs", map[string]any{"comment": "no name"})
	if r.status != 400 || r.json["error_code"] != "INVALID_ARGUMENT" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], "name") {
		t.Errorf("violations %q", v)
	}
}

func TestWithoutSpecValidation(t *testing.T) {
	s := uctest.NewServer(uctest.WithoutSpecValidation())
	defer s.Close()
	s.AddCatalog("c")
	r := do(t, "GET", s.URL()+"/delta/v1/config?catalog=c", nil)
	if r.status != 200 || r.json["protocol-version"] != "1.0" {
		t.Errorf("config without protocol-versions: %d %s", r.status, r.body)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations recorded with validation off: %q", v)
	}
}

// TestWithSpecDir validates against definitions found in a given folder:
// the same request that passes unchecked above is a violation here.
func TestWithSpecDir(t *testing.T) {
	dir, err := spectest.DefaultSpecDir()
	if err != nil {
		t.Fatal(err)
	}
	s := uctest.NewServer(spectest.WithSpecDir(dir))
	defer s.Close()
	s.AddCatalog("c")
	r := do(t, "GET", s.URL()+"/delta/v1/config?catalog=c", nil)
	if r.status != 400 || len(s.Violations()) == 0 {
		t.Errorf("config without the required protocol-versions: %d %s, violations %q", r.status, r.body, s.Violations())
	}
	if _, err := spectest.LoadSpec(t.TempDir()); err == nil {
		t.Error("LoadSpec of a folder without the definitions succeeded")
	}
}

func TestClassicPagingAndDelete(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"b", "a"} {
		if r := do(t, "POST", f.tables, extCreate(n, "file://"+t.TempDir())); r.status != 200 {
			t.Fatal(r.status)
		}
	}
	var pages [][]string
	token := ""
	for {
		url := f.srv.URL() + "/tables?catalog_name=c&schema_name=s&max_results=1"
		if token != "" {
			url += "&page_token=" + token
		}
		r := do(t, "GET", url, nil)
		var names []string
		for _, ti := range r.json["tables"].([]any) {
			names = append(names, ti.(map[string]any)["name"].(string))
		}
		pages = append(pages, names)
		tok, ok := r.json["next_page_token"].(string)
		if !ok {
			break
		}
		token = tok
	}
	if got := strings.Trim(strings.Join(flatten(pages), ","), ","); got != "a,b,t" || len(pages) != 4 || pages[3] != nil {
		t.Errorf("pages %q", pages)
	}
	r := do(t, "DELETE", f.srv.URL()+"/tables/c.s.a", nil)
	if r.status != 200 || len(r.body) != 0 {
		t.Errorf("classic delete: %d %q", r.status, r.body)
	}
	if r := do(t, "GET", f.srv.URL()+"/tables/c.s.a", nil); r.status != 404 || r.json["error_code"] != "TABLE_NOT_FOUND" {
		t.Errorf("get after delete: %d %s", r.status, r.body)
	}
}

func flatten(p [][]string) []string {
	var out []string
	for _, x := range p {
		out = append(out, x...)
	}
	return out
}
