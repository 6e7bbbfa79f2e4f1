package sync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// countedEnv is a reconciler over e's schema with the given mode and
// resync interval, whose catalog requests are counted and whose metrics
// are on a registry of its own.
func countedEnv(t *testing.T, e *env, mode sync.Mode, resync time.Duration) (*sync.Reconciler, *opCounter, *prometheus.Registry) {
	t.Helper()
	counter := &opCounter{}
	c, err := uc.New(e.client.BaseURL(), uc.Options{Observer: counter.observe})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	now := time.Now()
	r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + "." + e.schema + ".*"}, Mode: mode}}, func(o *sync.Options) {
		o.Catalog, o.ResyncInterval, o.Metrics = kindOf(c), resync, m
		o.Now = func() time.Time { return now }
	})
	return r, counter, reg
}

// statusWithoutTimes is r's status with the cycle times left out (the two
// reconcilers compared run at different moments).
var statusWithoutTimes = cmpopts.IgnoreFields(sync.TableStatus{}, "LastSync", "LastCycle")

// TestRefusedLocationsCostNoCatalogRead: 20 tables whose catalog location
// the storage policy refuses are refused from the listing, every cycle,
// without one per-table catalog request (4 cycles: 0 loadTable, where each
// cost one loadTable a cycle before: 80), with the result and metrics the
// full reconcile gives them.
func TestRefusedLocationsCostNoCatalogRead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const refusedN = 20
	for i := range refusedN {
		e.plant(fmt.Sprintf("r%02d", i), fmt.Sprintf("s3://elsewhere/wh/r%02d", i))
	}
	e.register("basic_partitioned", "good", -1)
	r, counter, reg := countedEnv(t, e, sync.ModeSync, time.Hour)
	var last *sync.Report
	for cycle := 1; cycle <= 4; cycle++ {
		rep := r.Sync(ctx)
		if got := rep.Count(sync.OutcomeFlagged); got != refusedN {
			t.Fatalf("cycle %d: %d flagged, want %d\n%s", cycle, got, refusedN, reportText(rep))
		}
		for i := range refusedN {
			assertRefused(t, e, rep, "", fmt.Sprintf("r%02d", i), "outside storage.allowed_locations")
		}
		want := map[string]int{}
		if cycle == 1 {
			want["loadTable"] = 1 // the good table's first read
		}
		if got := perTable(counter.take()); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
			t.Errorf("cycle %d: per-table catalog requests %v, want %v", cycle, got, want)
		}
		last = rep
	}
	if got := errorsTotal(t, reg, sync.ReasonLocation); got != 4*refusedN {
		t.Errorf("deltasync_errors_total{reason=location} = %v, want %d (one per refused table per cycle)", got, 4*refusedN)
	}

	// The full reconcile of the same tables (no listing: loadTable first)
	// gives the same results, but for the etag, which a listing lacks.
	full, fullCounter, _ := countedEnv(t, e, sync.ModeSync, time.Hour)
	for i := range refusedN {
		name := e.name(fmt.Sprintf("r%02d", i))
		got := findResult(t, last, name.String())
		want := full.Reconcile(ctx, sync.Target{Name: name, Mode: sync.ModeSync})
		if want.Etag == "" {
			t.Errorf("%s: the full reconcile's result has no etag: %+v", name, want)
		}
		want.Etag = ""
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: refused from the listing differs from the full reconcile (-full +listed):\n%s", name, d)
		}
	}
	if got := perTable(fullCounter.take()); got["loadTable"] != refusedN {
		t.Errorf("full reconciles: %v, want one loadTable per table (what a cycle cost each before)", got)
	}
}

// TestWarnModeDriftCostsNoCatalogReadWhileUnchanged: tables whose drift a
// warn-mode rule flags (found, not written) are read in full in the first
// cycle only; while their listed record and log stay as they were, the
// next cycles report them flagged as before (same results, same status) at
// the cost of their LIST, with no per-table catalog request. A flagged
// table whose record or log changes is fully reconciled again.
func TestWarnModeDriftCostsNoCatalogReadWhileUnchanged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const n = 6
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = e.register("delta-0.8.0", fmt.Sprintf("w%d", i), -1)
		// A writer changes the table's properties: drift in warn mode.
		writeCommit(t, dirs[i], 2, metaData(`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`,
			"", map[string]string{"owner.team": fmt.Sprintf("team%d", i)}))
	}
	fast, counter, _ := countedEnv(t, e, sync.ModeWarn, time.Hour)
	// Read in full every cycle: what the fast reconciler must report.
	full, _, _ := countedEnv(t, e, sync.ModeWarn, 0)
	check := func(cycle int, wantLoads map[string]int) *sync.Report {
		t.Helper()
		rep := fast.Sync(ctx)
		want := full.Sync(ctx)
		if got := rep.Count(sync.OutcomeFlagged); got != n {
			t.Fatalf("cycle %d: %d flagged, want %d\n%s", cycle, got, n, reportText(rep))
		}
		for _, res := range rep.Results {
			if res.Status != sync.StatusOutOfSync || res.Plan == nil || res.Plan.Empty() {
				t.Errorf("cycle %d: %s reported %s/%s plan=%v, want flagged out of sync with its drift", cycle, res.Table, res.Outcome, res.Status, res.Plan)
			}
		}
		if d := cmp.Diff(want.Results, rep.Results); d != "" {
			t.Errorf("cycle %d: results differ from full reconciles (-full +fast):\n%s", cycle, d)
		}
		if d := cmp.Diff(full.Status(), fast.Status(), statusWithoutTimes); d != "" {
			t.Errorf("cycle %d: status differs from full reconciles (-full +fast):\n%s", cycle, d)
		}
		if got := perTable(counter.take()); !cmp.Equal(got, wantLoads, cmpopts.EquateEmpty()) {
			t.Errorf("cycle %d: per-table catalog requests %v, want %v", cycle, got, wantLoads)
		}
		return rep
	}
	check(1, map[string]int{"loadTable": n})
	check(2, nil)
	check(3, nil)
	for _, s := range fast.Status() {
		if s.OutOfSyncCycles != 3 || len(s.Drift) == 0 {
			t.Errorf("after 3 cycles: %+v, want 3 cycles out of sync with drift", s)
		}
	}

	// w0's record changes (someone sets a property in the catalog), w1's
	// log advances: both are read in full again, the others stay cheap.
	before := e.record("w0")
	if _, err := e.client.UpdateTable(ctx, e.name("w0"), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: before.ID}, uc.AssertEtag{Etag: before.Etag}},
		Updates:      []uc.Update{uc.SetProperties{Updates: map[string]string{"owner.note": "hand edit"}}},
	}); err != nil {
		t.Fatal(err)
	}
	writeCommit(t, dirs[1], 3, metaData(`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`,
		"", map[string]string{"owner.team": "moved"}))
	rep := check(4, map[string]int{"loadTable": 2})
	if res := findResult(t, rep, e.name("w1").String()); res.LogVersion == nil || *res.LogVersion != 3 {
		t.Errorf("w1 after its log advanced: log version %v, want 3", res.LogVersion)
	}
	// Both are flagged again, and cheap again.
	check(5, nil)
}
