package contract

import (
	"strings"
	"testing"
)

// Column renames through set-columns. Unity Catalog 0.6.0 takes any
// column list (testRenames pins that, so the suite notices when the
// guards of open PRs #1907/#1909/#1910 reach a release); with those
// guards a server refuses more than one top-level rename per request and
// any rename or drop on a table without column mapping
// (RunColumnRenameGuards, against uctest.WithColumnRenameGuards until a
// server has them).

// mappedCreate is an EXTERNAL create of a name-mode column-mapped table
// with columns a, b, c (physical names col-a, col-b, col-c).
func mappedCreate(name, location string) map[string]any {
	c := externalCreate(name, location)
	c["columns"] = mappedColumns("a", "b", "c")
	c["partition-columns"] = []string{}
	c["protocol"] = protocol(2, 5, nil, nil)
	c["properties"] = map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "3"}
	return c
}

// mappedColumns names the columns a, b, c in order; a name's physical
// name stays col-<old name> whatever the column is called now.
func mappedColumns(names ...string) map[string]any {
	fields := make([]any, len(names))
	for i, n := range names {
		fields[i] = field(n, "long", true, map[string]any{
			"delta.columnMapping.id":           i + 1,
			"delta.columnMapping.physicalName": "col-" + string(rune('a'+i)),
		})
	}
	return map[string]any{"type": "struct", "fields": fields}
}

func (h *harness) createMapped(t *testing.T, name string) map[string]any {
	t.Helper()
	loc, _ := fileLocation(t)
	r := h.do(t, "POST", "/delta/v1/catalogs/"+h.catalog+"/schemas/"+h.schema+"/tables", mappedCreate(name, loc)).want(t, 200, "create "+name)
	return metadata(t, r)
}

func columnNames(md map[string]any) string {
	cols, _ := md["columns"].(map[string]any)
	fields, _ := cols["fields"].([]any)
	var names []string
	for _, f := range fields {
		m, _ := f.(map[string]any)
		names = append(names, str(m["name"]))
	}
	return strings.Join(names, ",")
}

// testRenames pins what the OSS server does today: two top-level renames
// in one set-columns, and a drop without column mapping, are taken.
func (h *harness) testRenames(t *testing.T) {
	md := h.createMapped(t, "renamed_twice")
	after := h.step(t, "renamed_twice", md, act("set-columns", "columns", mappedColumns("x", "y", "c")))
	if got := columnNames(after); got != "x,y,c" {
		t.Errorf("two renames in one request: columns %s, want x,y,c", got)
	}
	plain := h.createExternal(t, h.schema, "dropped_plain")
	cols := columns()
	fields := cols["fields"].([]any)
	cols["fields"] = fields[1:] // drop the first column, keep the partition column
	h.step(t, "dropped_plain", plain, act("set-columns", "columns", cols))
}

// RunColumnRenameGuards pins the answers of a server with the set-columns
// guards of Unity Catalog PRs #1907/#1909/#1910; each refusal leaves the
// record unchanged.
func RunColumnRenameGuards(t *testing.T, baseURL string, opts ...Option) {
	cfg := config{client: defaultClient()}
	for _, o := range opts {
		o(&cfg)
	}
	h := &harness{cfg: cfg, base: strings.TrimRight(baseURL, "/"), catalog: "deltasync_ct_" + randHex(6)}
	h.setup(t)
	refused := func(table string, md map[string]any, cols map[string]any, message, what string) {
		t.Helper()
		tick()
		h.do(t, "POST", h.tablePath(h.schema, table), update(str(md["table-uuid"]), str(md["etag"]), act("set-columns", "columns", cols))).
			deltaError(t, 400, "InvalidParameterValueException", message, what)
		after := metadata(t, h.do(t, "GET", h.tablePath(h.schema, table), nil).want(t, 200, "load"))
		rolled(t, md, after, false, what)
	}
	md := h.createMapped(t, "guarded")
	refused("guarded", md, mappedColumns("x", "y", "c"), "At most one top-level column rename", "two renames")
	lost := mappedColumns("a", "b", "c")
	lost["fields"].([]any)[1].(map[string]any)["metadata"] = map[string]any{}
	refused("guarded", md, lost, "loses its column mapping identity", "identity stripped")
	// One rename per request is taken, so two renames are two requests.
	md = h.step(t, "guarded", md, act("set-columns", "columns", mappedColumns("x", "b", "c")))
	md = h.step(t, "guarded", md, act("set-columns", "columns", mappedColumns("x", "y", "c")))
	if got := columnNames(md); got != "x,y,c" {
		t.Errorf("after two single renames: columns %s, want x,y,c", got)
	}
	plain := h.createExternal(t, h.schema, "guarded_plain")
	cols := columns()
	cols["fields"] = cols["fields"].([]any)[1:]
	refused("guarded_plain", plain, cols, "does not use column mapping", "drop without column mapping")
}
