package sync

import (
	"bytes"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// testLog is the log of the report fixture's tables (sync/plan's tests use
// the same one).
const testSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1","comment":"key"}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}`

func testLog() plan.LogState {
	return plan.LogState{
		Version: 7, CommitTimestamp: 1700000000000,
		Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors"},
			WriterFeatures: []string{"columnMapping", "deletionVectors", "appendOnly", "clustering", "domainMetadata"}},
		SchemaString:     testSchema,
		PartitionColumns: []string{"part"},
		Configuration:    map[string]string{"delta.columnMapping.mode": "name", "owner.team": "sales"},
		Description:      "orders",
		Clustering:       [][]string{{"col-1"}},
		Location:         "/data/orders/",
	}
}

// faithful builds the record a spec-faithful server holds after
// registering log and recording its version.
func faithful(t *testing.T, log plan.LogState) plan.Record {
	t.Helper()
	return uc.RecordOf(catalog.TableName{Catalog: "main", Schema: "sales", Table: "orders"}, faithfulTable(t, log), log.Description, "file:///data/orders")
}

// faithfulTable is faithful's loadTable answer.
func faithfulTable(t *testing.T, log plan.LogState) *uc.LoadTableResponse {
	t.Helper()
	cols, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	props := maps.Clone(log.Configuration)
	maps.Copy(props, catalog.ProtocolProperties(log.Protocol))
	if log.Clustering != nil {
		props["clusteringColumns"] = `[["col-1"]]`
	}
	props["delta.lastUpdateVersion"] = "7"
	props["delta.lastCommitTimestamp"] = "1700000000000"
	props["delta.rowTracking.rowIdHighWaterMark"] = "99"
	v := log.Version
	return &uc.LoadTableResponse{Metadata: uc.TableMetadata{
		Etag: "e1", TableType: "EXTERNAL", TableUUID: "u1", Location: "file:///data/orders",
		Columns: cols, PartitionColumns: log.PartitionColumns, Properties: props, LastCommitVersion: &v,
	}}
}

// reportFixture is a fixed cycle with one table of each outcome.
func reportFixture(t *testing.T) *Report {
	t.Helper()
	log := testLog()
	rec := faithful(t, log)
	rec.Properties["stray"] = "x"
	rec.Comment = "old"
	p := plan.Diff(log, rec, plan.DiffOptions{})
	v := func(n int64) *int64 { return &n }
	return &Report{
		Cycle: 3, Duration: 1234 * time.Millisecond, DryRun: true,
		Results: []Result{
			{Table: "main.sales.a", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeUnchanged, Status: StatusSynced,
				LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
			{Table: "main.sales.b", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
				Reason: "dry run: would send set-properties", Plan: &p, Actions: p.Edit(log).Actions(),
				WouldUpdate: true, LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
			{Table: "main.sales.c", Type: "MANAGED", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
				Reason: "MANAGED table: watch-only, drift is flagged, never written", Plan: &p},
			{Table: "main.sales.d", Mode: ModeWarn, Outcome: OutcomeFailed, Status: StatusUnknown,
				ErrorReason: ReasonCatalog, Reason: "catalog: 404 NoSuchTableException"},
		},
		Skipped:  []Skipped{{Table: "main.sales.v", Reason: "table type VIEW is not a Delta table"}},
		Deferred: []string{"main.sales.e"},
		Err:      errors.New("listing schemas of other: boom"),
	}
}

func TestReportGolden(t *testing.T) {
	rep := reportFixture(t)
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"report.golden.txt", func(b *bytes.Buffer) error { return rep.WriteText(b) }},
		{"report.golden.json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
	} {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if diff := cmp.Diff(string(want), buf.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", golden, diff)
		}
	}
	if got, want := rep.Summary(), "4 tables: 1 unchanged, 1 would update, 1 flagged, 1 failed in 1.2s, 1 skipped, 1 backing off (listing incomplete)"; got != want {
		t.Errorf("Summary = %q\nwant      %q", got, want)
	}
	if !rep.Failed() || !rep.Drift() {
		t.Errorf("Failed/Drift wrong")
	}
}

var update = flag.Bool("update", false, "rewrite golden files under testdata/")
