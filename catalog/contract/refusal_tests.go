package contract

import (
	"strings"
	"testing"
)

// testRefusals pins the updates the server refuses outright: the same
// request would be refused again, so a client must not retry it as a
// transient failure. Each case is sent against a fresh record and must
// leave it unchanged (the etag does not roll).
//
// The 400s come from UC 0.6.0's ColumnUtils.validateStructType /
// validateDecimalType / applyPartitionColumns. The 500s are the database's
// column widths (JPA's default VARCHAR(255) for IdentifiableDAO.name,
// PropertyDAO.key and value; length = 65535 for the table and column
// comments): the server has no check of its own and answers
// "Value too long for column".
func (h *harness) testRefusals(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	// The record is partitioned by day, which every new column list keeps.
	cols := func(fields ...any) map[string]any {
		fields = append(fields, field("day", "date", true, map[string]any{}))
		return act("set-columns", "columns", map[string]any{"type": "struct", "fields": fields})
	}
	plain := func(name string) map[string]any { return field(name, "long", true, map[string]any{}) }
	cases := []struct {
		name    string
		action  map[string]any
		status  int
		typ     string
		message string
	}{
		{"column names equal ignoring case", cols(plain("id"), plain("ID")), 400, "InvalidParameterValueException", "Duplicate field name (case-insensitive)"},
		{"struct field names equal ignoring case", cols(field("s", map[string]any{"type": "struct", "fields": []any{plain("a"), plain("A")}}, true, map[string]any{})), 400, "InvalidParameterValueException", "Duplicate field name (case-insensitive)"},
		{"empty column name", cols(plain("")), 400, "InvalidParameterValueException", ".name is required"},
		{"blank column name", cols(plain(" ")), 400, "InvalidParameterValueException", ".name is required"},
		{"decimal precision over 38", cols(field("d", "decimal(39,2)", true, map[string]any{})), 400, "InvalidParameterValueException", "precision must be in [0, 38]"},
		{"partition column not a column", act("set-partition-columns", "partition-columns", []string{"nope"}), 400, "InvalidParameterValueException", "partition-columns references unknown column: nope"},
		{"property key over 255", act("set-properties", "updates", map[string]string{long(256): "v"}), 500, "", "Value too long for column"},
		{"property value over 255", act("set-properties", "updates", map[string]string{"k": long(256)}), 500, "", "Value too long for column"},
		// Widths count UTF-16 code units, as Java does: 128 emoji are 256.
		{"property value of 128 emoji", act("set-properties", "updates", map[string]string{"k": strings.Repeat("\U0001F600", 128)}), 500, "", "Value too long for column"},
		{"column name over 255", cols(plain(long(256))), 500, "", "Value too long for column"},
		{"column comment over 65535", cols(field("c", "long", true, map[string]any{"comment": long(65536)})), 500, "", "Value too long for column"},
		{"clustering property over 255", act("set-domain-metadata", "updates", map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{long(130)}, {long(130)}}}}), 500, "", "Value too long for column"},
		{"table comment over 65535", act("set-table-comment", "comment", long(65536)), 500, "", "Value too long for column"},
	}
	md := h.createExternal(t, h.schema, "refusals")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tick()
			r := h.do(t, "POST", h.tablePath(h.schema, "refusals"), update(str(md["table-uuid"]), str(md["etag"]), c.action))
			if c.typ != "" {
				r.deltaError(t, c.status, c.typ, c.message, c.name)
			} else {
				r.want(t, c.status, c.name)
				if !strings.Contains(string(r.body), c.message) {
					t.Errorf("%s: body %.300s does not contain %q", c.name, r.body, c.message)
				}
			}
			after := metadata(t, h.do(t, "GET", h.tablePath(h.schema, "refusals"), nil).want(t, 200, "load"))
			rolled(t, md, after, false, c.name)
		})
	}
	// At the limits themselves the server accepts.
	ok := h.createExternal(t, h.schema, "at_limits")
	h.step(t, "at_limits", ok,
		act("set-properties", "updates", map[string]string{long(255): strings.Repeat("é", 255), "emoji": strings.Repeat("\U0001F600", 127)}),
		act("set-table-comment", "comment", long(65535)))
}

// RunClusteringRefused pins the answer Databricks-hosted Unity Catalog
// gives an outside writer's delta.clustering domain-metadata update (400
// "Update to Delta domain metadata delta.clustering is not allowed", error
// code 5115; delta-io/delta PR #7497), which the OSS server accepts. It
// runs against uctest.WithClusteringUpdatesRefused here; against Databricks
// itself where one is at hand.
func RunClusteringRefused(t *testing.T, baseURL string, opts ...Option) {
	cfg := config{client: defaultClient()}
	for _, o := range opts {
		o(&cfg)
	}
	h := &harness{cfg: cfg, base: strings.TrimRight(baseURL, "/"), catalog: "deltasync_ct_" + randHex(6)}
	h.setup(t)
	md := h.createExternal(t, h.schema, "clustered")
	tick()
	h.do(t, "POST", h.tablePath(h.schema, "clustered"), update(str(md["table-uuid"]), str(md["etag"]),
		act("set-domain-metadata", "updates", map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}}}}))).
		deltaError(t, 400, "InvalidParameterValueException", "Update to Delta domain metadata delta.clustering is not allowed", "clustering update")
	// The other actions are taken: only the clustering domain is refused.
	h.step(t, "clustered", md, act("set-properties", "updates", map[string]string{"k": "v"}),
		act("set-domain-metadata", "updates", map[string]any{"delta.rowTracking": map[string]any{"rowIdHighWaterMark": 5}}))
}
