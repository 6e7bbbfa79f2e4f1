package metrics

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/deltasync/deltasync/sync/plan"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// metricsScenario drives every collector with fixed values.
func metricsScenario(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg, _ := metricsScenarioWith(t)
	return reg
}

// metricsScenarioWith is metricsScenario, with the Metrics it drove.
func metricsScenarioWith(t *testing.T) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v1.2.3", "go1.26.8")
	v := func(n int64) *int64 { return &n }
	at := time.Unix(1700000000, 0)
	m.RecordTable(Table{Name: "main.sales.orders", Type: "EXTERNAL", Mode: "sync", Status: "Synced",
		Outcome: "synced", LogVersion: v(12), CatalogVersion: v(12), LastSync: at})
	m.RecordTable(Table{Name: "main.sales.managed", Type: "MANAGED", Mode: "sync", Status: "OutOfSync",
		Outcome: "flagged", Drift: []plan.DriftKind{plan.KindSchema, plan.KindProperties}, LogVersion: v(3), CatalogVersion: v(2),
		OutOfSyncCycles: 4})
	m.RecordTable(Table{Name: "main.sales.broken", Type: "EXTERNAL", Mode: "warn", Status: "Unknown",
		Outcome: "failed", OutOfSyncCycles: 1})
	// A table that went away leaves no series behind.
	m.RecordTable(Table{Name: "main.sales.gone", Type: "EXTERNAL", Mode: "sync", Status: "Synced",
		Outcome: "unchanged"})
	m.ForgetTable("main.sales.gone")
	m.RecordError("log")
	m.RecordError("conflict")
	m.RecordCycle(1500*time.Millisecond, true, at)
	m.RecordCycle(20*time.Second, false, at.Add(time.Minute))
	m.CycleStarted(at.Add(2 * time.Minute)) // a cycle running: 3 tables queued, 1 done
	m.CycleTablesListed(3)
	m.CycleTableDone()
	m.ObserveStorage("list", 20*time.Millisecond, nil)
	m.ObserveStorage("get", 3*time.Millisecond, errors.New("boom"))
	m.ObserveCatalog("loadTable", 200, 40*time.Millisecond, nil)
	m.ObserveCatalog("updateTable", 409, 60*time.Millisecond, nil)
	m.ObserveCatalog("getTable", 0, 5*time.Second, errors.New("timeout"))
	return reg, m
}

func TestMetricsGolden(t *testing.T) {
	got := encodeGather(t, metricsScenario(t))
	golden := filepath.Join("testdata", "metrics.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("/metrics exposition differs from %s (-want +got):\n%s", golden, diff)
	}
}

func TestMetricsLint(t *testing.T) {
	problems, err := testutil.GatherAndLint(metricsScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestMetricNames pins the published names: alert rules and dashboards use them.
func TestMetricNames(t *testing.T) {
	mfs, err := metricsScenario(t).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
	}
	want := []string{
		"deltasync_build_info",
		"deltasync_catalog_request_duration_seconds",
		"deltasync_catalog_requests_total",
		"deltasync_catalog_requests_waiting",
		"deltasync_cycle_duration_seconds",
		"deltasync_cycle_in_progress",
		"deltasync_cycle_started_timestamp_seconds",
		"deltasync_cycle_tables_done",
		"deltasync_cycle_tables_listed",
		"deltasync_cycles_total",
		"deltasync_errors_total",
		"deltasync_last_successful_cycle_timestamp_seconds",
		"deltasync_storage_request_duration_seconds",
		"deltasync_storage_requests_total",
		"deltasync_syncs_total",
		"deltasync_table_catalog_version",
		"deltasync_table_drift",
		"deltasync_table_info",
		"deltasync_table_last_sync_timestamp_seconds",
		"deltasync_table_log_version",
		"deltasync_table_out_of_sync_cycles",
		"deltasync_tables_discovered",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metric names (-want +got):\n%s", diff)
	}
}
