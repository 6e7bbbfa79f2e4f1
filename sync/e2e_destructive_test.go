package sync_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// destructive runs one destructive.py step (one delta-rs commit).
func destructive(t *testing.T, py, dir, step string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, filepath.Join("testdata", "deltars", "destructive.py"), dir, step).CombinedOutput()
	if err != nil {
		t.Fatalf("destructive.py %s %s: %v\n%s", filepath.Base(dir), step, err, out)
	}
}

// TestDeltaRSDestructiveChanges: delta-rs drops a column, changes a type
// and changes the partitioning (overwrites with schema_mode="overwrite"),
// each on a registered table, against the catalog (the real server when
// DELTASYNC_UC_URL is set). Under on_destructive: hold the table is held,
// its record read back unchanged and deltasync_table_held set; under sync
// the record equals the log afterwards.
func TestDeltaRSDestructiveChanges(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	root := t.TempDir()
	for _, step := range []string{"drop_column", "change_type", "repartition"} {
		t.Run(step, func(t *testing.T) {
			table := step
			dir := filepath.Join(root, table)
			evolve(t, py, dir, "create")
			if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
				t.Fatalf("register %s: %v", table, err)
			}
			destructive(t, py, dir, step)
			before := e.record(table)
			full := e.name(table).String()
			reg := prometheus.NewRegistry()
			m := metrics.New(reg, "test")
			rep := e.reconciler([]sync.Rule{{Include: []string{full}, OnDestructive: sync.OnDestructiveHold}},
				func(o *sync.Options) { o.Metrics = m }).Sync(ctx)
			if len(rep.Results) != 1 || rep.Results[0].Held != sync.HeldDestructive || rep.Results[0].Outcome != sync.OutcomeFlagged {
				t.Fatalf("%s under hold: %s", step, reportText(rep))
			}
			t.Logf("%s held: %s", step, rep.Results[0].Reason)
			after := e.record(table)
			if after.Etag != before.Etag || !reflect.DeepEqual(before, after) {
				t.Errorf("%s: the held record changed: etag %s -> %s", step, before.Etag, after.Etag)
			}
			if got := heldSeries(t, reg); got[full] != 1 {
				t.Errorf("%s: deltasync_table_held = %v, want %s 1", step, got, full)
			}
			rep = e.reconciler([]sync.Rule{{Include: []string{full}}}).Sync(ctx)
			if rep.Results[0].Outcome != sync.OutcomeSynced {
				t.Fatalf("%s under sync: %s", step, reportText(rep))
			}
			e.matchesLog(table, dir)
		})
	}
}
