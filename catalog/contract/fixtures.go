package contract

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// columns is a schema that exercises every type form on the wire.
func columns() map[string]any {
	return map[string]any{"type": "struct", "fields": []any{
		field("id", "long", false, map[string]any{"comment": "primary key"}),
		field("amount", "decimal(10,2)", true, map[string]any{}),
		field("tags", map[string]any{"type": "array", "element-type": "string", "contains-null": true}, true, map[string]any{}),
		field("attrs", map[string]any{"type": "map", "key-type": "string", "value-type": "integer", "value-contains-null": false}, true, map[string]any{}),
		field("addr", map[string]any{"type": "struct", "fields": []any{
			field("city", "string", true, map[string]any{"x.flag": true, "x.n": 3}),
		}}, true, map[string]any{}),
		field("day", "date", true, map[string]any{}),
	}}
}

func field(name string, typ any, nullable bool, md map[string]any) map[string]any {
	return map[string]any{"name": name, "type": typ, "nullable": nullable, "metadata": md}
}

func protocol(r, w int, rf, wf []string) map[string]any {
	p := map[string]any{"min-reader-version": r, "min-writer-version": w}
	if rf != nil {
		p["reader-features"] = rf
	}
	if wf != nil {
		p["writer-features"] = wf
	}
	return p
}

// fileLocation is a file:// URL for a fresh directory, and the form the
// server stores it in (no trailing slash).
func fileLocation(t *testing.T) (send, stored string) {
	dir := filepath.ToSlash(t.TempDir())
	return "file://" + dir + "/", "file://" + strings.TrimRight(dir, "/")
}

// externalCreate is a DeltaCreateTableRequest for an EXTERNAL table.
func externalCreate(name, location string) map[string]any {
	return map[string]any{
		"name":                     name,
		"location":                 location,
		"table-type":               "EXTERNAL",
		"comment":                  "created by the contract suite",
		"columns":                  columns(),
		"partition-columns":        []string{"day"},
		"protocol":                 protocol(1, 2, nil, nil),
		"properties":               map[string]string{"delta.appendOnly": "false", "owner.team": "data"},
		"last-commit-timestamp-ms": int64(1700000000000),
	}
}

// createExternal creates an EXTERNAL table via the Delta API and returns the
// response's metadata.
func (h *harness) createExternal(t *testing.T, schema, name string) map[string]any {
	t.Helper()
	loc, _ := fileLocation(t)
	r := h.do(t, "POST", "/delta/v1/catalogs/"+h.catalog+"/schemas/"+schema+"/tables", externalCreate(name, loc)).want(t, 200, "create "+name)
	return metadata(t, r)
}

func metadata(t *testing.T, r response) map[string]any {
	t.Helper()
	md, ok := r.json["metadata"].(map[string]any)
	if !ok {
		t.Fatalf("no metadata in %s", r.body)
	}
	return md
}

func props(md map[string]any) map[string]any {
	p, _ := md["properties"].(map[string]any)
	return p
}

// update is a DeltaUpdateTableRequest body.
func update(uuid, etag string, actions ...map[string]any) map[string]any {
	reqs := []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}}
	if etag != "" {
		reqs = append(reqs, map[string]any{"type": "assert-etag", "etag": etag})
	}
	ups := make([]any, len(actions))
	for i, a := range actions {
		ups[i] = a
	}
	return map[string]any{"requirements": reqs, "updates": ups}
}

func act(action string, kv ...any) map[string]any {
	m := map[string]any{"action": action}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// tick lets the clock move past the millisecond of the previous change: the
// real server derives its etag from updated_at in milliseconds (§4.4), so two
// changes in the same millisecond share an etag.
func tick() { time.Sleep(3 * time.Millisecond) }

func str(v any) string { s, _ := v.(string); return s }
