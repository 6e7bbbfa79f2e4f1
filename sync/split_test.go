package sync_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// Databricks refuses delta.clustering domain-metadata updates from outside
// writers (uctest.WithClusteringUpdatesRefused). The update is resent
// without set-domain-metadata and without the watermark: protocol and
// properties sync, clustering stays flagged refused, and the record does
// not claim the log version whose clustering it does not hold. Before, the
// whole update failed and nothing synced.
func TestRefusedActionIsSplitOff(t *testing.T) {
	e := newEnvAt(t, spectest.NewForTest(t, uctest.WithClusteringUpdatesRefused()).URL())
	dir := e.register("delta-0.8.0", "t", -1)
	const schema = `{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`
	writeCommit(t, dir, 2,
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": []string{"domainMetadata", "clustering"}}},
		map[string]any{"domainMetadata": map[string]any{"domain": "delta.clustering", "configuration": `{"clusteringColumns":[["value"]]}`, "removed": false}},
		metaData(schema, "", map[string]string{"owner.team": "data"}))
	before := watermark(t, e, "t")
	r := e.reconciler(only(e, "t"))
	rep := r.Sync(context.Background())
	res := rep.Results[0]
	if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonRefused || res.NotApplied ||
		res.Refused == nil || res.Refused.Action != "set-domain-metadata" || !strings.Contains(res.Refused.Message, "delta.clustering is not allowed") {
		t.Fatalf("%s %s not applied %v refused %+v\n%s", res.Outcome, res.ErrorReason, res.NotApplied, res.Refused, reportText(rep))
	}
	if want := []string{"set-protocol", "set-properties"}; !slices.Equal(res.Actions, want) {
		t.Errorf("resent %v, want %v", res.Actions, want)
	}
	if !strings.Contains(res.Reason, "resent without set-domain-metadata and the watermark") {
		t.Errorf("reason %q", res.Reason)
	}
	rec := e.record("t")
	if rec.Properties["owner.team"] != "data" || rec.Properties["delta.feature.clustering"] != "supported" {
		t.Errorf("protocol and properties did not sync: %v", rec.Properties)
	}
	if got := watermark(t, e, "t"); got != before {
		t.Errorf("watermark %d -> %d while clustering stays refused", before, got)
	}
	if kinds := res.Plan.Kinds(); !slices.Equal(kinds, []plan.DriftKind{plan.KindClustering, plan.KindVersion}) {
		t.Errorf("left %v, want clustering and version", kinds)
	}
	if st := r.Status()[0]; st.NextAttempt.IsZero() || st.Status != sync.StatusOutOfSync {
		t.Errorf("status %+v", st)
	}
}

// Against the real server (when DELTASYNC_UC_URL is set): a commit that
// adds a property and a column named like an existing one but for case.
// UC refuses the columns (400 Duplicate field name); the property still
// syncs, the watermark stays.
func TestRefusedColumnsAreSplitOff(t *testing.T) {
	e := newEnv(t)
	dir := e.register("delta-0.8.0", "t", -1)
	writeCommit(t, dir, 2, metaData(`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}},{"name":"VALUE","type":"long","nullable":true,"metadata":{}}]}`,
		"", map[string]string{"owner.team": "data"}))
	before := watermark(t, e, "t")
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	res := rep.Results[0]
	if res.ErrorReason != sync.ReasonRefused || res.Refused == nil || res.Refused.Action != "set-columns" || res.Refused.Status != 400 ||
		!slices.Equal(res.Actions, []string{"set-properties"}) {
		t.Fatalf("%s %s actions %v refused %+v\n%s", res.Outcome, res.ErrorReason, res.Actions, res.Refused, reportText(rep))
	}
	rec := e.record("t")
	if rec.Properties["owner.team"] != "data" || len(rec.Columns.Fields) != 1 {
		t.Errorf("properties %v, columns %d", rec.Properties, len(rec.Columns.Fields))
	}
	if got := watermark(t, e, "t"); got != before {
		t.Errorf("watermark %d -> %d while the schema stays refused", before, got)
	}
}
