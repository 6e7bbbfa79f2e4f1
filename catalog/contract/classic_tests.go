package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func (h *harness) testClassicGetTable(t *testing.T) {
	md := h.createExternal(t, h.schema, "classic")
	r := h.do(t, "GET", "/tables/"+h.full(h.schema, "classic"), nil).want(t, 200, "classic get")
	ti := r.json
	want := map[string]any{
		"name": "classic", "catalog_name": h.catalog, "schema_name": h.schema, "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "comment": "created by the contract suite",
		"table_id": md["table-uuid"], "storage_location": md["location"],
	}
	for k, v := range want {
		if ti[k] != v {
			t.Errorf("TableInfo.%s = %v, want %v", k, ti[k], v)
		}
	}
	if diff := cmp.Diff(props(md), ti["properties"]); diff != "" {
		t.Errorf("classic properties differ from the Delta ones (same store, synthetic keys included) (-delta +classic):\n%s", diff)
	}
	cols, _ := ti["columns"].([]any)
	type col struct {
		name, typeText, typeName string
		nullable                 bool
		partIdx                  any
		comment                  any
	}
	wantCols := []col{
		{"id", "bigint", "LONG", false, nil, "primary key"},
		{"amount", "decimal(10,2)", "DECIMAL", true, nil, nil},
		{"tags", "array<string>", "ARRAY", true, nil, nil},
		{"attrs", "map<string,int>", "MAP", true, nil, nil},
		{"addr", "struct<city:string>", "STRUCT", true, nil, nil},
		{"day", "date", "DATE", true, 0.0, nil},
	}
	if len(cols) != len(wantCols) {
		t.Fatalf("%d columns, want %d: %s", len(cols), len(wantCols), r.body)
	}
	sent := columns()["fields"].([]any)
	for i, w := range wantCols {
		c := cols[i].(map[string]any)
		if c["name"] != w.name || c["type_text"] != w.typeText || c["type_name"] != w.typeName || c["nullable"] != w.nullable {
			t.Errorf("column %d: %v, want %+v", i, c, w)
		}
		if pos, _ := c["position"].(float64); int(pos) != i {
			t.Errorf("column %s position %v, want %d", w.name, c["position"], i)
		}
		if c["partition_index"] != w.partIdx {
			t.Errorf("column %s partition_index %v, want %v", w.name, c["partition_index"], w.partIdx)
		}
		if c["comment"] != w.comment {
			t.Errorf("column %s comment %v, want %v", w.name, c["comment"], w.comment)
		}
		// type_json is the whole field as Spark StructField JSON (camelCase).
		var tj any
		if err := json.Unmarshal([]byte(str(c["type_json"])), &tj); err != nil {
			t.Errorf("column %s type_json %q: %v", w.name, c["type_json"], err)
			continue
		}
		if diff := cmp.Diff(camelField(sent[i]), tj); diff != "" {
			t.Errorf("column %s type_json (-want +got):\n%s", w.name, diff)
		}
	}
}

// camelField turns a Delta API field (kebab-case) into the log's camelCase
// StructField JSON.
func camelField(f any) any {
	rename := map[string]string{"element-type": "elementType", "contains-null": "containsNull",
		"key-type": "keyType", "value-type": "valueType", "value-contains-null": "valueContainsNull"}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k == "metadata" {
					out[k] = e
					continue
				}
				if n, ok := rename[k]; ok {
					k = n
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return roundTrip(walk(f))
}

func (h *harness) testPaging(t *testing.T) {
	schema := h.newSchema(t, "paging")
	names := []string{"t_c", "t_a", "t_b"}
	for _, n := range names {
		h.createExternal(t, schema, n)
	}
	list := func(limit int, token string) ([]string, string, bool) {
		q := fmt.Sprintf("/tables?catalog_name=%s&schema_name=%s&max_results=%d", h.catalog, schema, limit)
		if token != "" {
			q += "&page_token=" + token
		}
		r := h.do(t, "GET", q, nil).want(t, 200, "list tables")
		var got []string
		tables, _ := r.json["tables"].([]any)
		for _, ti := range tables {
			got = append(got, str(ti.(map[string]any)["name"]))
		}
		tok, has := r.json["next_page_token"].(string)
		return got, tok, has && tok != ""
	}
	for _, c := range []struct {
		max   int
		pages [][]string
	}{
		{1, [][]string{{"t_a"}, {"t_b"}, {"t_c"}, nil}},
		{2, [][]string{{"t_a", "t_b"}, {"t_c"}}},
		{3, [][]string{{"t_a", "t_b", "t_c"}, nil}},
		{50, [][]string{{"t_a", "t_b", "t_c"}}},
	} {
		token := ""
		for i, want := range c.pages {
			got, next, more := list(c.max, token)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("max_results=%d page %d (-want +got):\n%s", c.max, i, diff)
			}
			full := len(got) == c.max
			if more != full {
				t.Errorf("max_results=%d page %d: next_page_token present=%v, want %v (a token exactly when the page is full)", c.max, i, more, full)
			}
			if more && next != got[len(got)-1] {
				t.Errorf("max_results=%d page %d: token %q, want the last name %q", c.max, i, next, got[len(got)-1])
			}
			if !more && i != len(c.pages)-1 {
				t.Fatalf("max_results=%d: listing stopped after page %d", c.max, i)
			}
			token = next
		}
	}
}

func (h *harness) testHeadDeleteRename(t *testing.T) {
	md := h.createExternal(t, h.schema, "lifecycle")
	path := h.tablePath(h.schema, "lifecycle")
	if r := h.do(t, "HEAD", path, nil); r.status != 204 || len(r.body) != 0 {
		t.Errorf("HEAD existing: %d %q, want 204 without body", r.status, r.body)
	}
	if r := h.do(t, "HEAD", h.tablePath(h.schema, "no_such_"+randHex(3)), nil); r.status != 404 || len(r.body) != 0 {
		t.Errorf("HEAD missing: %d %q, want 404 without body", r.status, r.body)
	}
	h.do(t, "POST", path+"/metrics", map[string]any{"table-id": md["table-uuid"], "report": map[string]any{
		"commit-report": map[string]any{"num-files-added": 1}}}).want(t, 204, "report metrics")

	tick()
	h.do(t, "POST", path+"/rename", map[string]any{"new-name": "lifecycle2"}).want(t, 204, "rename")
	h.do(t, "GET", path, nil).deltaError(t, 404, "NoSuchTableException", "", "load the old name")
	lr := h.do(t, "GET", h.tablePath(h.schema, "lifecycle2"), nil).want(t, 200, "load the new name")
	if metadata(t, lr)["table-uuid"] != md["table-uuid"] {
		t.Errorf("rename changed the uuid")
	}
	rolled(t, md, metadata(t, lr), true, "rename")
	h.createExternal(t, h.schema, "taken")
	h.do(t, "POST", h.tablePath(h.schema, "lifecycle2")+"/rename", map[string]any{"new-name": "taken"}).
		deltaError(t, 409, "AlreadyExistsException", "", "rename onto an existing name")

	if r := h.do(t, "DELETE", h.tablePath(h.schema, "lifecycle2"), nil); r.status != 204 || len(r.body) != 0 {
		t.Errorf("DELETE: %d %q, want 204 without body", r.status, r.body)
	}
	if r := h.do(t, "HEAD", h.tablePath(h.schema, "lifecycle2"), nil); r.status != 404 {
		t.Errorf("HEAD after delete: %d, want 404", r.status)
	}
	h.do(t, "DELETE", h.tablePath(h.schema, "lifecycle2"), nil).deltaError(t, 404, "NoSuchTableException", "", "delete twice")
}

func (h *harness) testNotFound(t *testing.T) {
	tn := "no_such_table_" + randHex(3)
	r := h.do(t, "GET", h.tablePath(h.schema, tn), nil)
	r.deltaError(t, 404, "NoSuchTableException", "Table not found: "+h.full(h.schema, tn), "load a missing table")
	if len(r.json) != 1 {
		t.Errorf("the Delta envelope has only \"error\": %s", r.body)
	}
	h.do(t, "GET", fmt.Sprintf("/delta/v1/catalogs/%s/schemas/no_such_schema_%s/tables/t", h.catalog, randHex(3)), nil).
		deltaError(t, 404, "NoSuchSchemaException", "", "load in a missing schema")
	h.do(t, "GET", fmt.Sprintf("/delta/v1/catalogs/no_such_catalog_%s/schemas/s/tables/t", randHex(3)), nil).
		deltaError(t, 404, "NoSuchCatalogException", "", "load in a missing catalog")
	h.do(t, "GET", "/tables/"+h.full(h.schema, tn), nil).classicError(t, 404, "TABLE_NOT_FOUND", "classic get of a missing table")
	h.do(t, "GET", "/catalogs/no_such_catalog_"+randHex(3), nil).classicError(t, 404, "NOT_FOUND", "classic get of a missing catalog")
	h.do(t, "POST", "/catalogs", map[string]any{"name": h.catalog}).classicError(t, 400, "ALREADY_EXISTS", "classic create of an existing catalog")
}

func (h *harness) testNonDelta(t *testing.T) {
	_, loc := fileLocation(t)
	h.do(t, "POST", "/tables", map[string]any{
		"name": "parquet_tbl", "catalog_name": h.catalog, "schema_name": h.schema, "table_type": "EXTERNAL",
		"data_source_format": "PARQUET", "storage_location": loc,
		"columns": []any{map[string]any{"name": "id", "type_name": "LONG", "type_text": "bigint",
			"type_json": `{"name":"id","type":"long","nullable":true,"metadata":{}}`, "position": 0, "nullable": true}},
	}).want(t, 200, "classic create of a PARQUET table")
	path := h.tablePath(h.schema, "parquet_tbl")
	h.do(t, "GET", path, nil).deltaError(t, 400, "UnsupportedTableFormatException", "", "Delta load of a PARQUET table")
	ti := h.do(t, "GET", "/tables/"+h.full(h.schema, "parquet_tbl"), nil).want(t, 200, "classic get")
	h.do(t, "POST", path, update(str(ti.json["table_id"]), "", act("set-properties", "updates", map[string]string{"a": "1"}))).
		deltaError(t, 400, "UnsupportedTableFormatException", "", "Delta update of a PARQUET table")
	if r := h.do(t, "HEAD", path, nil); r.status != 204 {
		t.Errorf("HEAD of a PARQUET table: %d, want 204 (any format)", r.status)
	}
	if ti.json["data_source_format"] != "PARQUET" {
		t.Errorf("data_source_format %v", ti.json["data_source_format"])
	}
}

func (h *harness) testCredentials(t *testing.T) {
	md := h.createExternal(t, h.schema, "creds")
	for _, op := range []string{"READ", "READ_WRITE"} {
		r := h.do(t, "GET", h.tablePath(h.schema, "creds")+"/credentials?operation="+op, nil).want(t, 200, "credentials "+op)
		creds, _ := r.json["storage-credentials"].([]any)
		if len(creds) == 0 {
			t.Fatalf("no storage-credentials: %s", r.body)
		}
		c := creds[0].(map[string]any)
		if c["operation"] != op {
			t.Errorf("operation %v, want %s", c["operation"], op)
		}
		if p := strings.TrimRight(str(c["prefix"]), "/"); p == "" || !strings.HasPrefix(str(md["location"])+"/", p+"/") {
			t.Errorf("prefix %q for location %v", p, md["location"])
		}
		if _, ok := c["config"].(map[string]any); !ok {
			t.Errorf("config is not an object: %s", r.body)
		}
	}
}
