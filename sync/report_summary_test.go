package sync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The text summary and the JSON summary of one report carry the same
// counts, and a table a dry run would update is counted once, as
// would_update, never also as flagged.
func TestSummaryTextAndJSONAgree(t *testing.T) {
	for _, dry := range []bool{true, false} {
		rep := reportFixture(t)
		rep.DryRun = dry
		if !dry {
			rep.Results[1].WouldUpdate = false
			rep.Results[1].Outcome = OutcomeSynced
		}
		var buf bytes.Buffer
		if err := rep.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var j struct {
			Summary map[string]int `json:"summary"`
			Tables  []struct {
				Outcome string `json:"outcome"`
			} `json:"tables"`
		}
		if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
			t.Fatal(err)
		}
		s := j.Summary
		middle := fmt.Sprintf("%d synced", s["synced"])
		if dry {
			middle = fmt.Sprintf("%d would update", s["would_update"])
		}
		want := fmt.Sprintf("%d tables: %d unchanged, %s, %d flagged, %d failed in 1.2s, %d skipped, %d backing off",
			s["tables"], s["unchanged"], middle, s["flagged"], s["failed"], s["skipped"], s["backing_off"])
		if got := rep.Summary(); !strings.HasPrefix(got, want) {
			t.Errorf("dry run %v: text summary %q\ndisagrees with JSON summary %v (want prefix %q)", dry, got, s, want)
		}
		// Per-table outcomes add up to the summary.
		per := map[string]int{}
		for _, tb := range j.Tables {
			per[tb.Outcome]++
		}
		for _, k := range []string{"unchanged", "would_update", "synced", "flagged", "failed"} {
			if per[k] != s[k] {
				t.Errorf("dry run %v: %d tables have outcome %q, summary says %d", dry, per[k], k, s[k])
			}
		}
		if dry && (s["would_update"] != 1 || s["flagged"] != 1) {
			t.Errorf("dry run summary %v: want would_update 1 and flagged 1 (the would-update table is not also flagged)", s)
		}
	}
}

// A failed update is printed as not applied, never as sent.
func TestFailedUpdateTextSaysNotApplied(t *testing.T) {
	rep := &Report{Results: []Result{{
		Table: "main.sales.b", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFailed, Status: StatusUnknown,
		Reason: "catalog: 403 PERMISSION_DENIED: no MODIFY on main.sales.b", Actions: []string{"remove-properties", "set-properties"},
		NotApplied: true,
	}}}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	want := "main.sales.b (EXTERNAL, sync): failed [Unknown]\n" +
		"  reason: catalog: 403 PERMISSION_DENIED: no MODIFY on main.sales.b\n" +
		"  not applied (the update failed, see reason): remove-properties, set-properties\n"
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "sent:") {
		t.Errorf("a failed update is printed as sent:\n%s", got)
	}
}
