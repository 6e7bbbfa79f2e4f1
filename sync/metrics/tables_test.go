package metrics

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/deltasync/deltasync/sync/plan"
)

// TestTableSeriesFollowStatus: a table whose status, type or mode changes
// keeps exactly one table_info series (the new label set), and a forgotten
// table leaves none of its series behind while others keep theirs.
func TestTableSeriesFollowStatus(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	v := func(n int64) *int64 { return &n }
	m.RecordTable(Table{Name: "c.s.a", Type: "EXTERNAL", Mode: "sync", Status: "Synced", LogVersion: v(1)})
	m.RecordTable(Table{Name: "c.s.b", Type: "EXTERNAL", Mode: "sync", Status: "Synced", LogVersion: v(5)})
	m.RecordTable(Table{Name: "c.s.a", Type: "MANAGED", Mode: "warn", Status: "OutOfSync",
		Drift: []plan.DriftKind{plan.KindComment}, OutOfSyncCycles: 1})
	want := `
# HELP deltasync_table_info Always 1; labels describe each selected table and its sync status (Synced, OutOfSync, Unknown).
# TYPE deltasync_table_info gauge
deltasync_table_info{mode="sync",sync_status="Synced",table="c.s.b",table_type="EXTERNAL"} 1
deltasync_table_info{mode="warn",sync_status="OutOfSync",table="c.s.a",table_type="MANAGED"} 1
# HELP deltasync_table_log_version Latest Delta log version read for the table.
# TYPE deltasync_table_log_version gauge
deltasync_table_log_version{table="c.s.a"} 1
deltasync_table_log_version{table="c.s.b"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "deltasync_table_info", "deltasync_table_log_version"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(onlyDrift(t, reg, "c.s.a", "comment")); got != 1 {
		t.Errorf("drift comment of c.s.a = %v, want 1", got)
	}
	m.ForgetTable("c.s.a")
	n, err := testutil.GatherAndCount(reg, "deltasync_table_info", "deltasync_table_drift", "deltasync_table_log_version",
		"deltasync_table_out_of_sync_cycles")
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 0 + 1 + 1; n != want { // c.s.b only: info, log version, out-of-sync cycles; it has no drift
		t.Errorf("%d per-table series after forgetting c.s.a, want %d (c.s.b's)", n, want)
	}
}

// TestTableDriftOnlyDiffering: table_drift has a series (value 1) for each
// kind that differs and none for the others, so an in-sync fleet exports no
// drift series at all; a table whose drift is gone loses its series.
func TestTableDriftOnlyDiffering(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	m.RecordTable(Table{Name: "c.s.a", Type: "EXTERNAL", Mode: "sync", Status: "OutOfSync",
		Drift: []plan.DriftKind{plan.KindSchema, plan.KindProperties}})
	m.RecordTable(Table{Name: "c.s.b", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	want := `
# HELP deltasync_table_drift 1 when the catalog differs from the log in this kind of metadata; kinds without drift have no series.
# TYPE deltasync_table_drift gauge
deltasync_table_drift{kind="properties",table="c.s.a"} 1
deltasync_table_drift{kind="schema",table="c.s.a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "deltasync_table_drift"); err != nil {
		t.Error(err)
	}
	m.RecordTable(Table{Name: "c.s.a", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	if n, err := testutil.GatherAndCount(reg, "deltasync_table_drift"); err != nil || n != 0 {
		t.Errorf("%d drift series (err %v) once no table drifts, want 0", n, err)
	}
}

// TestTableSeriesInvalidUTF8: a catalog may name a table with bytes that
// are not UTF-8; its series carry the name with U+FFFD in their place
// instead of failing every scrape.
func TestTableSeriesInvalidUTF8(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	m.RecordTable(Table{Name: "c.s.\xff", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	m.RecordTable(Table{Name: "c.s.ok", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	want := `
# HELP deltasync_table_info Always 1; labels describe each selected table and its sync status (Synced, OutOfSync, Unknown).
# TYPE deltasync_table_info gauge
deltasync_table_info{mode="sync",sync_status="Synced",table="c.s.ok",table_type="EXTERNAL"} 1
deltasync_table_info{mode="sync",sync_status="Synced",table="c.s.` + "\uFFFD" + `",table_type="EXTERNAL"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "deltasync_table_info"); err != nil {
		t.Error(err)
	}
}

// inSyncFleet is a registry with the Metrics of n in-sync EXTERNAL tables,
// each with both versions and a last sync time (5 series per table).
func inSyncFleet(n int) (*prometheus.Registry, *Metrics) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, "v", "go")
	v := int64(7)
	for i := range n {
		m.RecordTable(Table{Name: fmt.Sprintf("main.s%d.table_%d", i%40, i), Type: "EXTERNAL", Mode: "sync",
			Status: "Synced", Outcome: "unchanged", LogVersion: &v, CatalogVersion: &v, LastSync: time.Unix(1e9, 0)})
	}
	return reg, m
}

// TestScrapeHeapPerTable bounds what one gather of the registry allocates
// per in-sync table. At fleet scale a scrape's series are all live at once
// (client_golang gathers everything before writing): at 50,000 tables the
// former 12 series per table built with MustNewConstMetric were ~4.5 KiB per
// table, a few hundred MiB per scrape.
func TestScrapeHeapPerTable(t *testing.T) {
	const n = 2000
	reg, _ := inSyncFleet(n)
	if _, err := reg.Gather(); err != nil { // warm: the registry's own one-time state
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mfs, err := reg.Gather()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "deltasync_table_") {
			series += len(mf.GetMetric())
		}
	}
	if want := 5 * n; series != want { // info, log and catalog version, out-of-sync cycles, last sync
		t.Errorf("%d per-table series for %d in-sync tables, want %d", series, n, want)
	}
	perTable := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("one gather: %.0f B allocated per table (%d series)", perTable, series)
	if perTable > 2048 {
		t.Errorf("one gather allocated %.0f B per in-sync table, want at most 2 KiB", perTable)
	}
}

// onlyDrift returns a collector yielding one drift series of the registry.
func onlyDrift(t *testing.T, reg *prometheus.Registry, table, kind string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "deltasync_table_drift" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range mt.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["table"] == table && l["kind"] == kind {
				g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
				g.Set(mt.GetGauge().GetValue())
				return g
			}
		}
	}
	t.Fatalf("no drift series for %s %s", table, kind)
	return nil
}

// BenchmarkRecordTable measures publishing one table's state in a registry
// already holding n tables: flat in n (it was linear: DeletePartialMatch).
func BenchmarkRecordTable(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprint(n, "tables"), func(b *testing.B) {
			m := newMetrics(prometheus.NewRegistry(), "v", "go")
			v := int64(3)
			st := make([]Table, n)
			for i := range st {
				st[i] = Table{Name: fmt.Sprintf("c.s%d.t%d", i%50, i), Type: "EXTERNAL", Mode: "sync",
					Status: "Synced", Outcome: "unchanged", LogVersion: &v, CatalogVersion: &v}
				m.RecordTable(st[i])
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.RecordTable(st[i%n])
				i++
			}
		})
	}
}
