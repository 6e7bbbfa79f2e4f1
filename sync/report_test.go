package sync

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reportFixture is a fixed cycle with one table of each outcome.
func reportFixture(t *testing.T) *Report {
	t.Helper()
	log := testLog()
	rec := faithful(t, log)
	rec.Table.Metadata.Properties["stray"] = "x"
	rec.Comment = "old"
	p := Diff(log, rec, DiffOptions{})
	v := func(n int64) *int64 { return &n }
	return &Report{
		Cycle: 3, Duration: 1234 * time.Millisecond, DryRun: true,
		Results: []Result{
			{Table: "main.sales.a", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeUnchanged, Status: StatusSynced,
				LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
			{Table: "main.sales.b", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
				Reason: "dry run: would send set-properties", Plan: &p, Actions: actionNames(p.Updates(log)),
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
