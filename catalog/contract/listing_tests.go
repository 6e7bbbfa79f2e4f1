package contract

import (
	"fmt"
	"testing"
)

// testListingUpdatedAt pins what deltasync's unchanged fast path relies
// on: a listTables entry's updated_at is the Delta API's updated-time of
// the same table, and every metadata update (which rolls the etag)
// advances it, so a change made only in the catalog shows in the next
// listing.
func (h *harness) testListingUpdatedAt(t *testing.T) {
	schema := h.newSchema(t, "listing")
	md := h.createExternal(t, schema, "t")
	listed := func() map[string]any {
		t.Helper()
		r := h.do(t, "GET", fmt.Sprintf("/tables?catalog_name=%s&schema_name=%s&max_results=50", h.catalog, schema), nil).
			want(t, 200, "list tables")
		tables, _ := r.json["tables"].([]any)
		if len(tables) != 1 {
			t.Fatalf("listing holds %d tables, want 1: %s", len(tables), r.body)
		}
		return tables[0].(map[string]any)
	}
	same := func(what string, listedAt, updatedTime any) {
		t.Helper()
		if listedAt == nil || fmt.Sprint(listedAt) != fmt.Sprint(updatedTime) {
			t.Errorf("%s: listed updated_at %v, Delta updated-time %v: want the same instant", what, listedAt, updatedTime)
		}
	}
	before := listed()
	same("after create", before["updated_at"], md["updated-time"])
	tick() // updated_at has millisecond precision
	r := h.do(t, "POST", h.tablePath(schema, "t"), update(str(md["table-uuid"]), str(md["etag"]),
		act("set-properties", "updates", map[string]string{"owner.note": "edited"}))).want(t, 200, "update")
	next := metadata(t, r)
	rolled(t, md, next, true, "set-properties")
	after := listed()
	if fmt.Sprint(after["updated_at"]) == fmt.Sprint(before["updated_at"]) {
		t.Errorf("a property edit rolled the etag but not the listed updated_at (%v)", after["updated_at"])
	}
	same("after set-properties", after["updated_at"], next["updated-time"])
	if p, _ := after["properties"].(map[string]any); p["owner.note"] != "edited" {
		t.Errorf("listing does not show the edited property: %v", after["properties"])
	}
}
