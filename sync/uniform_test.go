package sync_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

const uniformConf = "delta.universalFormat.enabledFormats"

// UniForm drift is read-only: reported with what the catalog can and
// cannot take, never written. A log that enables UniForm Iceberg under a
// record with no Iceberg pointer: the property syncs, the pointer is
// flagged. A record whose pointer was converted at version 0 while the log
// moves on: flagged once the log is ahead, the rest still syncs. Against
// the real server when DELTASYNC_UC_URL is set.
func TestUniformDriftIsFlaggedNeverWritten(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const schema = `{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`

	t.Run("pointer missing", func(t *testing.T) {
		dir := e.register("delta-0.8.0", "uni_missing", -1)
		writeCommit(t, dir, 2, metaData(schema, "", map[string]string{uniformConf: "iceberg"}))
		r := e.reconciler(only(e, "uni_missing"))
		res := r.Sync(ctx).Results[0]
		if res.Outcome != sync.OutcomeSynced || res.Status != sync.StatusOutOfSync || !slices.Contains(res.Actions, "set-properties") ||
			res.Plan == nil || res.Plan.Uniform == nil || res.Plan.Uniform.ConvertedVersion != nil ||
			!strings.Contains(res.Reason, "holds no Iceberg pointer") || !strings.Contains(res.Reason, "only at create") {
			t.Fatalf("%s %s, actions %v, reason %q, plan %+v", res.Outcome, res.Status, res.Actions, res.Reason, res.Plan)
		}
		again := r.Sync(ctx).Results[0]
		if again.Outcome != sync.OutcomeFlagged || again.Status != sync.StatusOutOfSync || len(again.Actions) != 0 ||
			!slices.Contains(again.Plan.Kinds(), plan.KindUniform) {
			t.Errorf("next cycle: %s %s, actions %v, kinds %v", again.Outcome, again.Status, again.Actions, again.Plan.Kinds())
		}
		if st := r.Status()[0]; !slices.Contains(st.Drift, plan.KindUniform) {
			t.Errorf("status drift %v", st.Drift)
		}
		if lt, err := e.client.LoadTable(ctx, e.name("uni_missing")); err != nil || len(lt.Uniform) != 0 {
			t.Errorf("a pointer was written (%v)", err)
		}
	})

	t.Run("pointer behind", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "uni_behind")
		copyLog(t, "delta-0.8.0", dir, -1)
		writeCommit(t, dir, 2, metaData(schema, "", map[string]string{uniformConf: "iceberg"}))
		cols, _ := catalog.ColumnsFromSchemaString(schema)
		ptr, _ := json.Marshal(map[string]any{"iceberg": map[string]any{"metadata-location": "file://" + dir + "/metadata/v1.metadata.json",
			"converted-delta-version": 0, "converted-delta-timestamp": 1700000000000}})
		if _, err := e.client.CreateTable(ctx, e.catalog, e.schema, uc.CreateTableRequest{
			Name: "uni_behind", Location: "file://" + dir, TableType: uc.TableTypeExternal, Columns: cols,
			Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, Properties: map[string]string{uniformConf: "iceberg"},
			LastCommitTimestampMs: 1700000000000, Uniform: ptr,
		}); err != nil {
			t.Fatal(err)
		}
		rec := e.reconciler(only(e, "uni_behind"), func(o *sync.Options) { o.ResyncInterval = time.Hour })
		res := rec.Sync(ctx).Results[0]
		u := res.Plan.Uniform
		if res.Status != sync.StatusOutOfSync || u == nil || u.ConvertedVersion == nil || *u.ConvertedVersion != 0 || u.LogVersion != 2 ||
			!strings.Contains(res.Reason, "converted at version 0, the log is at 2") || slices.Contains(res.Actions, "uniform") {
			t.Fatalf("%s %s, actions %v, reason %q, uniform %+v", res.Outcome, res.Status, res.Actions, res.Reason, u)
		}
		if !slices.Contains(res.Actions, "update-metadata-snapshot-version") {
			t.Errorf("the watermark did not sync: %v", res.Actions)
		}
		if res.Plan.MetadataDrift() || res.Plan.Version != nil {
			t.Errorf("the synced table's plan still shows what the update fixed: %+v", res.Plan)
		}
		// The next cycle of the same daemon still reports the UniForm
		// drift: the table is not confirmed from the listing as in sync.
		if again := rec.Sync(ctx).Results[0]; again.Status != sync.StatusOutOfSync || again.Plan == nil || again.Plan.Uniform == nil {
			t.Errorf("second cycle: %s %s, plan %+v: the UniForm drift vanished", again.Outcome, again.Status, again.Plan)
		}
		lt, err := e.client.LoadTable(ctx, e.name("uni_behind"))
		if err != nil || !strings.Contains(string(lt.Uniform), `"converted-delta-version":0`) {
			t.Errorf("pointer changed: %v %s", err, lt.Uniform)
		}
	})
}
