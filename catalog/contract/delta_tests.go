package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func (h *harness) testConfig(t *testing.T) {
	r := h.do(t, "GET", "/delta/v1/config?catalog="+h.catalog+"&protocol-versions=1.0", nil).want(t, 200, "config")
	if r.json["protocol-version"] != "1.0" {
		t.Errorf("protocol-version %v, want 1.0", r.json["protocol-version"])
	}
	var eps []string
	for _, e := range r.json["endpoints"].([]any) {
		eps = append(eps, str(e))
	}
	for _, want := range []string{
		"POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
		"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
		"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
		"HEAD /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
		"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials",
	} {
		if !slices.Contains(eps, want) {
			t.Errorf("endpoints lack %q: %v", want, eps)
		}
	}
	h.do(t, "GET", "/delta/v1/config?catalog=no_such_catalog_"+randHex(4)+"&protocol-versions=1.0", nil).
		deltaError(t, 404, "NoSuchCatalogException", "", "config of an unknown catalog")
}

func (h *harness) testCreateAndLoad(t *testing.T) {
	send, stored := fileLocation(t)
	req := externalCreate("created", send)
	cr := h.do(t, "POST", "/delta/v1/catalogs/"+h.catalog+"/schemas/"+h.schema+"/tables", req).want(t, 200, "create")
	externalCommits(t, cr, "EXTERNAL create")
	md := metadata(t, cr)
	for _, k := range []string{"etag", "table-type", "table-uuid", "location", "created-time", "updated-time", "columns", "properties"} {
		if _, ok := md[k]; !ok {
			t.Errorf("metadata lacks required %q", k)
		}
	}
	for _, k := range []string{"name", "comment", "protocol", "owner"} {
		if _, ok := md[k]; ok {
			t.Errorf("metadata has %q, which the load shape does not carry", k)
		}
	}
	if md["table-type"] != "EXTERNAL" || md["location"] != stored {
		t.Errorf("table-type %v location %v, want EXTERNAL %s", md["table-type"], md["location"], stored)
	}
	if diff := cmp.Diff(roundTrip(columns()), roundTrip(md["columns"])); diff != "" {
		t.Errorf("columns do not round-trip (-sent +stored):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"day"}, md["partition-columns"]); diff != "" {
		t.Errorf("partition-columns (-want +got):\n%s", diff)
	}
	p := props(md)
	want := map[string]any{
		"delta.appendOnly": "false", "owner.team": "data",
		"delta.minReaderVersion": "1", "delta.minWriterVersion": "2",
		"delta.lastUpdateVersion": "0", "delta.lastCommitTimestamp": "1700000000000",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("property %s = %v, want %v", k, p[k], v)
		}
	}
	if v, _ := md["last-commit-version"].(float64); v != 0 || md["last-commit-version"] == nil {
		t.Errorf("last-commit-version %v, want 0", md["last-commit-version"])
	}
	if v, _ := md["last-commit-timestamp-ms"].(float64); int64(v) != 1700000000000 {
		t.Errorf("last-commit-timestamp-ms %v, want 1700000000000", md["last-commit-timestamp-ms"])
	}

	lr := h.do(t, "GET", h.tablePath(h.schema, "created"), nil).want(t, 200, "load")
	if diff := cmp.Diff(cr.json, lr.json); diff != "" {
		t.Errorf("load differs from the create response (-create +load):\n%s", diff)
	}
	h.do(t, "POST", "/delta/v1/catalogs/"+h.catalog+"/schemas/"+h.schema+"/tables", req).
		deltaError(t, 409, "AlreadyExistsException", "", "create an existing name")
}

func roundTrip(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// step sends one update that must succeed and returns the new metadata.
func (h *harness) step(t *testing.T, table string, md map[string]any, actions ...map[string]any) map[string]any {
	t.Helper()
	tick()
	r := h.do(t, "POST", h.tablePath(h.schema, table), update(str(md["table-uuid"]), str(md["etag"]), actions...)).want(t, 200, "update")
	externalCommits(t, r, "EXTERNAL update")
	return metadata(t, r)
}

func rolled(t *testing.T, before, after map[string]any, want bool, what string) {
	t.Helper()
	if got := before["etag"] != after["etag"]; got != want {
		t.Errorf("%s: etag rolled = %v, want %v (%v -> %v)", what, got, want, before["etag"], after["etag"])
	}
}

func (h *harness) testUpdateActions(t *testing.T) {
	md := h.createExternal(t, h.schema, "actions")

	next := h.step(t, "actions", md, act("set-properties", "updates", map[string]string{"k1": "v1", "k2": "v2"}))
	rolled(t, md, next, true, "set-properties")
	if p := props(next); p["k1"] != "v1" || p["k2"] != "v2" {
		t.Errorf("set-properties: %v", p)
	}
	md = next

	next = h.step(t, "actions", md, act("remove-properties", "removals", []string{"k1", "never-there"}))
	rolled(t, md, next, true, "remove-properties")
	if _, ok := props(next)["k1"]; ok {
		t.Errorf("remove-properties left k1")
	}
	md = next

	cols := columns()
	cols["fields"] = append(cols["fields"].([]any), field("extra", "string", true, map[string]any{"comment": "added"}))
	next = h.step(t, "actions", md, act("set-columns", "columns", cols))
	rolled(t, md, next, true, "set-columns")
	if diff := cmp.Diff(roundTrip(cols), roundTrip(next["columns"])); diff != "" {
		t.Errorf("set-columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"day"}, next["partition-columns"]); diff != "" {
		t.Errorf("set-columns alone must keep partitions (-want +got):\n%s", diff)
	}
	md = next

	next = h.step(t, "actions", md, act("set-partition-columns", "partition-columns", []string{"ID", "day"}))
	rolled(t, md, next, true, "set-partition-columns")
	if diff := cmp.Diff([]any{"id", "day"}, next["partition-columns"]); diff != "" {
		t.Errorf("set-partition-columns (case-insensitive) (-want +got):\n%s", diff)
	}
	md = next

	next = h.step(t, "actions", md, act("set-protocol", "protocol",
		protocol(3, 7, []string{"deletionVectors"}, []string{"deletionVectors", "appendOnly", "v2Checkpoint"})))
	rolled(t, md, next, true, "set-protocol")
	p := props(next)
	for k, v := range map[string]string{
		"delta.minReaderVersion": "3", "delta.minWriterVersion": "7",
		"delta.feature.deletionVectors": "supported", "delta.feature.appendOnly": "supported", "delta.feature.v2Checkpoint": "supported",
	} {
		if p[k] != v {
			t.Errorf("after set-protocol %s = %v, want %s", k, p[k], v)
		}
	}
	if _, ok := p["delta.feature.catalogManaged"]; ok {
		t.Errorf("set-protocol on EXTERNAL added catalogManaged")
	}
	md = next
	next = h.step(t, "actions", md, act("set-protocol", "protocol", protocol(3, 7, []string{"columnMapping"}, []string{"columnMapping"})))
	p = props(next)
	if _, ok := p["delta.feature.deletionVectors"]; ok || p["delta.feature.columnMapping"] != "supported" {
		t.Errorf("set-protocol is a full replacement of the feature keys: %v", p)
	}
	md = next

	next = h.step(t, "actions", md, act("set-table-comment", "comment", "new comment"))
	rolled(t, md, next, true, "set-table-comment")
	md = next
	ti := h.do(t, "GET", "/tables/"+h.full(h.schema, "actions"), nil).want(t, 200, "classic get")
	if ti.json["comment"] != "new comment" {
		t.Errorf("classic comment %v, want %q", ti.json["comment"], "new comment")
	}

	next = h.step(t, "actions", md, act("set-domain-metadata", "updates", map[string]any{
		"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}, {"addr", "city"}}}}))
	rolled(t, md, next, true, "set-domain-metadata clustering")
	if v := props(next)["clusteringColumns"]; v != `[["id"],["addr","city"]]` {
		t.Errorf("clustering projection: clusteringColumns = %v, want [[\"id\"],[\"addr\",\"city\"]] (the server's key, not delta.clusteringColumns)", v)
	}
	md = next

	next = h.step(t, "actions", md, act("set-domain-metadata", "updates", map[string]any{
		"delta.rowTracking": map[string]any{"rowIdHighWaterMark": 42}}))
	rolled(t, md, next, false, "rowTracking-only set-domain-metadata")
	if v := props(next)["delta.rowTracking.rowIdHighWaterMark"]; v != "42" {
		t.Errorf("rowTracking projection = %v, want 42", v)
	}
	md = next

	next = h.step(t, "actions", md, act("remove-domain-metadata", "domains", []string{"delta.clustering", "delta.rowTracking"}))
	rolled(t, md, next, true, "remove-domain-metadata")
	p = props(next)
	if _, ok := p["clusteringColumns"]; ok {
		t.Errorf("remove-domain-metadata left clusteringColumns")
	}
	if _, ok := p["delta.rowTracking.rowIdHighWaterMark"]; ok {
		t.Errorf("remove-domain-metadata left the row-id high-water mark")
	}
	md = next

	next = h.step(t, "actions", md, act("update-metadata-snapshot-version", "last-commit-version", 7, "last-commit-timestamp-ms", int64(1700000007000)))
	rolled(t, md, next, true, "update-metadata-snapshot-version")
	if v, _ := next["last-commit-version"].(float64); v != 7 {
		t.Errorf("last-commit-version %v, want 7", next["last-commit-version"])
	}
	if v, _ := next["last-commit-timestamp-ms"].(float64); int64(v) != 1700000007000 {
		t.Errorf("last-commit-timestamp-ms %v", next["last-commit-timestamp-ms"])
	}
	if p := props(next); p["delta.lastUpdateVersion"] != "7" || p["delta.lastCommitTimestamp"] != "1700000007000" {
		t.Errorf("snapshot-version properties: %v", p)
	}
}

func (h *harness) testUpdateCombined(t *testing.T) {
	md := h.createExternal(t, h.schema, "combined")
	cols := map[string]any{"type": "struct", "fields": []any{
		field("id", "long", false, map[string]any{}),
		field("region", "string", true, map[string]any{}),
	}}
	// Order in the request does not matter: the server applies its canonical order.
	next := h.step(t, "combined", md,
		act("set-table-comment", "comment", "combined"),
		act("remove-properties", "removals", []string{"owner.team"}),
		act("set-partition-columns", "partition-columns", []string{"region"}),
		act("set-properties", "updates", map[string]string{"delta.feature.fake": "supported", "x": "y"}),
		act("set-protocol", "protocol", protocol(1, 7, nil, []string{"appendOnly"})),
		act("set-columns", "columns", cols),
	)
	if diff := cmp.Diff(roundTrip(cols), roundTrip(next["columns"])); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"region"}, next["partition-columns"]); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
	p := props(next)
	if _, ok := p["owner.team"]; ok {
		t.Errorf("owner.team not removed")
	}
	// set-properties runs after set-protocol, so a synthetic key sent through
	// it survives the protocol's feature reset (§4.2, §10.4).
	if p["x"] != "y" || p["delta.feature.fake"] != "supported" || p["delta.feature.appendOnly"] != "supported" || p["delta.minWriterVersion"] != "7" {
		t.Errorf("properties after the combined update: %v", p)
	}
}

func (h *harness) testEtagNoOp(t *testing.T) {
	md := h.createExternal(t, h.schema, "noop")
	next := h.step(t, "noop", md, act("set-properties", "updates", map[string]string{"owner.team": "data"}))
	rolled(t, md, next, true, "set-properties with an unchanged value")
	next2 := h.step(t, "noop", next, act("remove-properties", "removals", []string{"never-there"}))
	rolled(t, next, next2, true, "remove-properties of a missing key")
	if diff := cmp.Diff(props(md), props(next2)); diff != "" {
		t.Errorf("no-op updates changed properties (-before +after):\n%s", diff)
	}
	lr := h.do(t, "GET", h.tablePath(h.schema, "noop"), nil).want(t, 200, "load")
	if metadata(t, lr)["etag"] != next2["etag"] {
		t.Errorf("load etag %v differs from the last update's %v", metadata(t, lr)["etag"], next2["etag"])
	}
}

func (h *harness) testRequirementConflicts(t *testing.T) {
	md := h.createExternal(t, h.schema, "conflicts")
	uuid, etag := str(md["table-uuid"]), str(md["etag"])
	path := h.tablePath(h.schema, "conflicts")
	next := h.step(t, "conflicts", md, act("set-properties", "updates", map[string]string{"a": "1"}))

	h.do(t, "POST", path, update(uuid, etag, act("set-properties", "updates", map[string]string{"a": "2"}))).
		deltaError(t, 409, "UpdateRequirementConflictException", "assert-etag failed", "stale etag")
	other := "00000000-0000-4000-8000-000000000000"
	h.do(t, "POST", path, update(other, str(next["etag"]), act("set-properties", "updates", map[string]string{"a": "2"}))).
		deltaError(t, 409, "UpdateRequirementConflictException", "assert-table-uuid failed", "wrong uuid")
	// assert-etag is checked after the apply: an invalid action wins (§10.7).
	h.do(t, "POST", path, update(uuid, etag, act("set-partition-columns", "partition-columns", []string{"no_such_column"}))).
		deltaError(t, 400, "InvalidParameterValueException", "", "stale etag with an invalid action")
	lr := h.do(t, "GET", path, nil).want(t, 200, "load")
	if p := props(metadata(t, lr)); p["a"] != "1" {
		t.Errorf("a rejected update changed the table: a = %v", p["a"])
	}
	if metadata(t, lr)["etag"] != next["etag"] {
		t.Errorf("a rejected update rolled the etag")
	}
}

func (h *harness) testShapeErrors(t *testing.T) {
	missing := h.tablePath(h.schema, "no_such_table_"+randHex(3))
	uuid := "00000000-0000-4000-8000-000000000000"
	cases := []struct {
		name string
		body map[string]any
		msg  string
		opts []reqOpt
	}{
		{"duplicate action", update(uuid, "", act("set-properties", "updates", map[string]string{"a": "1"}), act("set-properties", "updates", map[string]string{"b": "1"})), "At most one", nil},
		{"duplicate requirement", map[string]any{
			"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
			"updates":      []any{act("set-properties", "updates", map[string]string{"a": "1"})}}, "At most one", nil},
		{"no assert-table-uuid", map[string]any{
			"requirements": []any{map[string]any{"type": "assert-etag", "etag": "x"}},
			"updates":      []any{act("set-properties", "updates", map[string]string{"a": "1"})}}, "assert-table-uuid", nil},
		{"set/remove-properties overlap", update(uuid, "", act("set-properties", "updates", map[string]string{"a": "1", "b": "2"}), act("remove-properties", "removals", []string{"b"})), "overlap", nil},
		{"domain overlap", update(uuid, "", act("set-domain-metadata", "updates", map[string]any{"delta.rowTracking": map[string]any{"rowIdHighWaterMark": 1}}), act("remove-domain-metadata", "domains", []string{"delta.rowTracking"})), "overlap", nil},
		{"unknown action", update(uuid, "", act("set-owner", "owner", "x")), "", []reqOpt{expectViolation(h)}},
		// The server parses Delta bodies strictly: an unknown field is a 400.
		{"unknown field", update(uuid, "", act("set-properties", "updates", map[string]string{"a": "1"}, "extra", 1)), "", []reqOpt{expectViolation(h)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(t, "POST", missing, c.body, c.opts...)
			r.want(t, 400, c.name+" on a missing table")
			if e, ok := r.json["error"].(map[string]any); !ok || e["code"] != 400.0 {
				t.Errorf("no Delta error envelope: %s", r.body)
			} else if msg := str(e["message"]); c.msg != "" && !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not mention %q", msg, c.msg)
			}
		})
	}
	h.do(t, "POST", missing, update(uuid, "", act("set-properties", "updates", map[string]string{"a": "1"}))).
		deltaError(t, 404, "NoSuchTableException", "Table not found: "+h.catalog+"."+h.schema+".", "well-formed update of a missing table")
}

func (h *harness) testExternalGating(t *testing.T) {
	md := h.createExternal(t, h.schema, "gating")
	path := h.tablePath(h.schema, "gating")
	commit := map[string]any{"version": 1, "timestamp": 1700000001000, "file-name": "00000000000000000001.7d4b.json", "file-size": 100, "file-modification-timestamp": 1700000001000}
	h.do(t, "POST", path, update(str(md["table-uuid"]), "", act("add-commit", "commit", commit))).
		deltaError(t, 400, "InvalidParameterValueException", "MANAGED", "add-commit on EXTERNAL")
	h.do(t, "POST", path, update(str(md["table-uuid"]), "", act("set-latest-backfilled-version", "latest-published-version", 1))).
		deltaError(t, 400, "InvalidParameterValueException", "MANAGED", "backfill on EXTERNAL")
	lr := h.do(t, "GET", path, nil).want(t, 200, "load")
	rolled(t, md, metadata(t, lr), false, "rejected add-commit")
}

// externalCommits pins the real server's EXTERNAL shape: "commits" is
// present and empty (its generated model starts the list empty), and there
// is no latest-table-version.
func externalCommits(t *testing.T, r response, what string) {
	t.Helper()
	if c, ok := r.json["commits"].([]any); !ok || len(c) != 0 {
		t.Errorf("%s: commits = %v, want []", what, r.json["commits"])
	}
	if _, ok := r.json["latest-table-version"]; ok {
		t.Errorf("%s: has latest-table-version %v", what, r.json["latest-table-version"])
	}
}
