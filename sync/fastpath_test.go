package sync_test

import (
	"context"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// opCounter counts catalog requests by operation (a catalog.Observer).
type opCounter struct {
	mu  stdsync.Mutex
	ops map[string]int
}

func (c *opCounter) observe(op string, _ int, _ time.Duration, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[op]++
}

// take returns the counts so far and starts again.
func (c *opCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.ops
	c.ops = nil
	return m
}

// perTable are the operations that concern one table (not listings).
func perTable(ops map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range ops {
		if !strings.HasPrefix(op, "list") {
			out[op] = n
		}
	}
	return out
}

// fastEnv is a reconciler over every table of e's catalog with the fast
// path on, whose catalog requests are counted, and a settable clock.
func fastEnv(t *testing.T, e *env, resync time.Duration) (*sync.Reconciler, *opCounter, *time.Time) {
	t.Helper()
	counter := &opCounter{}
	c, err := uc.New(e.client.BaseURL(), uc.Options{Observer: counter.observe})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}, func(o *sync.Options) {
		o.Catalog, o.ResyncInterval = kindOf(c), resync
		o.Now = func() time.Time { return now }
	})
	return rec, counter, &now
}

func outcomeByTable(rep *sync.Report) map[string]sync.Outcome {
	out := map[string]sync.Outcome{}
	for _, r := range rep.Results {
		out[r.Table] = r.Outcome
	}
	return out
}

// TestUnchangedTablesCostNoCatalogRead: once verified, a table whose
// listing and log did not change is confirmed with no per-table catalog
// request; a change made only in the catalog (someone sets a property: the
// etag rolls and updated_at advances) is found in the very next cycle.
// Runs against uctest and, with DELTASYNC_UC_URL, the real server.
func TestUnchangedTablesCostNoCatalogRead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		e.register("basic_partitioned", n, -1)
	}
	rec, counter, _ := fastEnv(t, e, time.Hour)
	rep := rec.Sync(ctx)
	if rep.Failed() || rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("first cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	// The listing's comment and location are current when its updated_at
	// is the record's: no classic getTable.
	if got := perTable(counter.take()); got["loadTable"] != 3 || got["getTable"] != 0 {
		t.Errorf("first cycle: per-table requests %v, want one loadTable per table and nothing else", got)
	}
	rep = rec.Sync(ctx)
	if rep.Failed() || rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("second cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	if got := perTable(counter.take()); len(got) != 0 {
		t.Errorf("second cycle: per-table catalog requests %v, want none", got)
	}
	for _, s := range rec.Status() {
		if s.Status != sync.StatusSynced || s.LogVersion == nil || s.CatalogVersion == nil || *s.LogVersion != *s.CatalogVersion {
			t.Errorf("status after a confirmed cycle: %+v", s)
		}
	}

	// Someone edits a property of b in the catalog only.
	before := e.record("b")
	_, err := e.client.UpdateTable(ctx, e.name("b"), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: before.ID}, uc.AssertEtag{Etag: before.Etag}},
		Updates:      []uc.Update{uc.SetProperties{Updates: map[string]string{"owner.note": "hand edit"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := e.record("b"); after.Etag == before.Etag || after.UpdatedTime == before.UpdatedTime {
		t.Fatalf("the hand edit did not roll the etag (%s -> %s) or updated-time (%d -> %d)",
			before.Etag, after.Etag, before.UpdatedTime, after.UpdatedTime)
	}
	rep = rec.Sync(ctx)
	got := outcomeByTable(rep)
	if got[e.name("b").String()] != sync.OutcomeSynced || got[e.name("a").String()] != sync.OutcomeUnchanged ||
		got[e.name("c").String()] != sync.OutcomeUnchanged {
		t.Fatalf("after a catalog-only edit of b: %v\n%s", got, reportText(rep))
	}
	ops := perTable(counter.take())
	if ops["loadTable"] != 2 || ops["updateTable"] != 1 {
		t.Errorf("per-table requests %v; want b only: loadTable, updateTable, reload", ops)
	}
	if p := e.record("b").Properties; p["owner.note"] != "" {
		t.Errorf("the hand-edited property is still there: %v", p)
	}
	// b is remembered with the state its own update left: quiet again.
	rep = rec.Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("cycle after the sync: %s\n%s", rep.Summary(), reportText(rep))
	}
	if got := perTable(counter.take()); len(got) != 0 {
		t.Logf("cycle after the sync: per-table requests %v (the server's Delta updated-time is not the listing's clock)", got)
		if e.srv != nil {
			t.Errorf("uctest: per-table requests %v after our own sync, want none", got)
		}
	}
}

// TestFastPathSeesLogChangesAndResyncs: a new commit in the log (the LIST
// shows a newer version) goes through the full reconcile, and every table
// is fully re-read once ResyncInterval has passed; with ResyncInterval 0
// every cycle is a full one.
func TestFastPathSeesLogChangesAndResyncs(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	dirA := e.register("basic_partitioned", "a", 0)
	e.register("basic_partitioned", "b", -1)
	rec, counter, now := fastEnv(t, e, time.Hour)
	if rep := rec.Sync(ctx); rep.Failed() {
		t.Fatal(rep.Summary())
	}
	counter.take()
	copyLog(t, "basic_partitioned", dirA, -1) // writers commit to a
	rep := rec.Sync(ctx)
	if got := outcomeByTable(rep); got[e.name("a").String()] != sync.OutcomeSynced || got[e.name("b").String()] != sync.OutcomeUnchanged {
		t.Fatalf("after commits to a: %v\n%s", got, reportText(rep))
	}
	if ops := perTable(counter.take()); ops["loadTable"] != 2 || ops["updateTable"] != 1 {
		t.Errorf("per-table requests %v; want a's loadTable, updateTable and reload only", ops)
	}
	*now = now.Add(time.Hour) // every table is due for a full re-read
	rep = rec.Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 2 {
		t.Fatalf("resync cycle: %s", rep.Summary())
	}
	if ops := perTable(counter.take()); ops["loadTable"] != 2 {
		t.Errorf("resync cycle: per-table requests %v, want a loadTable per table", ops)
	}

	every, counter2, _ := fastEnv(t, e, 0)
	for range 2 {
		every.Sync(ctx)
		if ops := perTable(counter2.take()); ops["loadTable"] != 2 {
			t.Errorf("resync_interval 0: per-table requests %v, want a loadTable per table every cycle", ops)
		}
	}
}

// maxUnchangedAllocs: 77 measured when written, about 60 of them inside
// gocloud's fileblob LIST (tracing span, directory read, attribute probes)
// and under 20 our own (result, status, metrics entry, logger fields).
const maxUnchangedAllocs = 120

// TestUnchangedTableAllocs bounds the allocations of confirming one
// unchanged table (the fast path: one LIST of its log through fileblob, the
// result, its status and metrics), so a regression that brings back
// per-table decoding or a catalog read shows here.
func TestUnchangedTableAllocs(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	e.register("basic_partitioned", "a", -1)
	rec, counter, _ := fastEnv(t, e, time.Hour)
	if rep := rec.Sync(ctx); rep.Failed() || rep.Count(sync.OutcomeUnchanged) != 1 {
		t.Fatal(rep.Summary())
	}
	var listed *uc.TableInfo
	err := e.client.ListTablesPages(ctx, e.catalog, e.schema, func(page []uc.TableInfo) error {
		listed = &page[0]
		return nil
	})
	if err != nil || listed == nil {
		t.Fatal(err)
	}
	target := sync.Target{Name: e.name("a"), Mode: sync.ModeSync, Listed: &catalog.Listed{Name: e.name("a"), Type: listed.TableType,
		ID: listed.TableID, Location: listed.StorageLocation, Comment: listed.Comment, UpdatedAt: listed.UpdatedAt}}
	counter.take()
	allocs := testing.AllocsPerRun(50, func() {
		if res := rec.Reconcile(ctx, target); res.Outcome != sync.OutcomeUnchanged {
			t.Fatalf("%+v", res)
		}
	})
	if ops := counter.take(); len(ops) != 0 {
		t.Errorf("catalog requests %v, want none", ops)
	}
	t.Logf("%.0f allocations per unchanged table", allocs)
	if allocs > maxUnchangedAllocs {
		t.Errorf("%.0f allocations per unchanged table, want at most %d", allocs, maxUnchangedAllocs)
	}
}

// TestCatalogOnlySchemaEditIsRepaired: between cycles a Reconciler keeps a
// table's schema by digest only (deltalog.Snapshot.Compact). When someone
// edits the columns in the catalog only, the next cycle finds the listing
// changed, sees that the catalog's columns are not the log's schema, reads
// the log's schema again and pushes it: the catalog ends with the log's
// columns. Runs against uctest and, with DELTASYNC_UC_URL, the real server.
func TestCatalogOnlySchemaEditIsRepaired(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		e.register("basic_partitioned", n, -1)
	}
	rec, counter, _ := fastEnv(t, e, time.Hour)
	for cycle := range 2 {
		if rep := rec.Sync(ctx); rep.Failed() || rep.Count(sync.OutcomeUnchanged) != 2 {
			t.Fatalf("cycle %d: %s\n%s", cycle, rep.Summary(), reportText(rep))
		}
	}
	counter.take()
	before := e.record("b")
	logCols := before.Columns
	edited := catalog.StructType{Fields: slices.Clone(logCols.Fields[:len(logCols.Fields)-1])}
	_, err := e.client.UpdateTable(ctx, e.name("b"), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: before.ID}, uc.AssertEtag{Etag: before.Etag}},
		Updates:      []uc.Update{uc.SetColumns{Columns: edited}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.record("b").Columns; len(got.Fields) != len(logCols.Fields)-1 {
		t.Fatalf("the hand edit did not drop a column: %d columns", len(got.Fields))
	}
	rep := rec.Sync(ctx)
	got := outcomeByTable(rep)
	if got[e.name("b").String()] != sync.OutcomeSynced || got[e.name("a").String()] != sync.OutcomeUnchanged {
		t.Fatalf("after a catalog-only column edit of b: %v\n%s", got, reportText(rep))
	}
	for _, r := range rep.Results {
		if r.Table == e.name("b").String() && (r.Plan == nil || r.Plan.Schema == nil) {
			t.Errorf("b was synced without a schema change in its plan: %+v", r.Plan)
		}
	}
	if after := e.record("b").Columns; !cmp.Equal(after, logCols, cmpopts.EquateEmpty()) {
		t.Errorf("b's columns after the sync (-log +catalog):\n%s", cmp.Diff(logCols, after, cmpopts.EquateEmpty()))
	}
	if ops := perTable(counter.take()); ops["updateTable"] != 1 {
		t.Errorf("per-table requests %v; want one updateTable, for b", ops)
	}
}

// TestDriftedSchemaKeptBetweenCycles: a compact snapshot keeps only its
// schema's digest when the catalog's columns spell the log's schema; a
// table whose catalog differs (here: a column dropped in the catalog of a
// watch-only table, which deltasync never fixes) keeps the string, so
// that each later full reconcile diffs it without reading the whole log
// again: one LIST per cycle, no GET.
func TestDriftedSchemaKeptBetweenCycles(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.register("basic_partitioned", "w", -1)
	before := e.record("w")
	edited := catalog.StructType{Fields: slices.Clone(before.Columns.Fields[:len(before.Columns.Fields)-1])}
	if _, err := e.client.UpdateTable(ctx, e.name("w"), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: before.ID}, uc.AssertEtag{Etag: before.Etag}},
		Updates:      []uc.Update{uc.SetColumns{Columns: edited}},
	}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}, Mode: sync.ModeWarn}}, func(o *sync.Options) {
		o.ResyncInterval = 0 // every cycle a full reconcile
		o.Metrics = metrics.New(reg, "kept")
	})
	gets := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for _, mf := range mfs {
			if mf.GetName() != "deltasync_storage_requests_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "op" && l.GetValue() == "get" {
						n += m.GetCounter().GetValue()
					}
				}
			}
		}
		return n
	}
	for cycle := 1; cycle <= 3; cycle++ {
		was := gets()
		rep := rec.Sync(ctx)
		if len(rep.Results) != 1 || rep.Results[0].Plan == nil || rep.Results[0].Plan.Schema == nil {
			t.Fatalf("cycle %d: want the schema drift reported: %s\n%s", cycle, rep.Summary(), reportText(rep))
		}
		if got := gets() - was; cycle > 1 && got != 0 {
			t.Errorf("cycle %d: %v storage GETs; the drifted table's log was read again", cycle, got)
		}
	}
}
