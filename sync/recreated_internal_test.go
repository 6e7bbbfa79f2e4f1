package sync

import (
	"strings"
	"testing"

	"github.com/deltasync/deltasync/sync/plan"
)

// TestBehindLog: a log behind the catalog's watermark is another table
// (synced, with the evidence) only on evidence: another metaData.id than
// the log read at the location before, or a newest commit newer than the
// one the watermark names by the time written in it. A file's modification
// time (a commit without commitInfo) is never evidence, however new.
// Otherwise it is the same table behind, flagged with why.
func TestBehindLog(t *testing.T) {
	v3, t3 := int64(3), int64(1_700_000_003_000)
	rec := func(ts *int64) *plan.Record {
		return &plan.Record{LastCommitVersion: &v3, LastCommitTimestampMs: ts}
	}
	for _, tc := range []struct {
		name      string
		rec       *plan.Record
		logID     string
		logTS     int64
		modTime   bool // logTS is the file's modification time
		prevID    string
		recreated []string // substrings of the evidence; nil: behind
		behind    []string // substrings of the flag's reason
	}{
		{name: "another metaData.id", rec: rec(&t3), logID: "new", logTS: t3 - 1, prevID: "old",
			recreated: []string{"log was recreated: metaData.id new, where the log read here before had old"}},
		{name: "newer commit, daemon just started", rec: rec(&t3), logID: "new", logTS: t3 + 1,
			recreated: []string{"its newest commit (version 0, 2023-11-14T22:13:23.001Z) is newer than the one the catalog's watermark names (version 3, 2023-11-14T22:13:23.000Z)"}},
		{name: "both", rec: rec(&t3), logID: "new", logTS: t3 + 1, prevID: "old",
			recreated: []string{"metaData.id new", "; its newest commit"}},
		{name: "same id, older commit", rec: rec(&t3), logID: "same", logTS: t3 - 1000, prevID: "same",
			behind: []string{"catalog records log version 3 but the log's latest is 0; not pushing an older snapshot",
				"same metaData.id same", "is not newer than the one the watermark names (version 3"}},
		{name: "same commit time", rec: rec(&t3), logID: "x", logTS: t3,
			behind: []string{"the log is behind, not another table (its newest commit"}},
		{name: "no commit time recorded", rec: rec(nil), logID: "x", logTS: t3 + 1,
			behind: []string{"the catalog records no commit time for version 3"}},
		{name: "newer modification time, daemon just started", rec: rec(&t3), logID: "x", logTS: t3 + 1, modTime: true,
			behind: []string{"the log is behind, not another table (its newest commit (version 0) has no commitInfo timestamp: its time (2023-11-14T22:13:23.001Z) is the file's modification time, not evidence)"}},
		{name: "newer modification time, same id", rec: rec(&t3), logID: "same", logTS: t3 + 1, modTime: true, prevID: "same",
			behind: []string{"same metaData.id same as the log read here before; its newest commit (version 0) has no commitInfo timestamp", "not evidence"}},
		{name: "newer modification time, another id", rec: rec(&t3), logID: "new", logTS: t3 + 1, modTime: true, prevID: "old",
			recreated: []string{"log was recreated: metaData.id new, where the log read here before had old"}},
		{name: "modification time, no commit time recorded", rec: rec(nil), logID: "x", logTS: t3 + 1, modTime: true,
			behind: []string{"is the file's modification time, not evidence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &plan.LogState{Version: 0, CommitTimestamp: tc.logTS, CommitTimestampInLog: !tc.modTime, TableID: tc.logID}
			got, err := behindLog(tc.rec, log, tc.prevID)
			if tc.recreated != nil {
				if err != nil {
					t.Fatalf("flagged (%v), want recreated", err)
				}
				for _, s := range tc.recreated {
					if !strings.Contains(got, s) {
						t.Errorf("evidence %q lacks %q", got, s)
					}
				}
				return
			}
			if got != "" || err == nil {
				t.Fatalf("recreated %q, %v; want flagged", got, err)
			}
			if p, ok := err.(*problem); !ok || p.outcome != OutcomeFailed || p.reason != ReasonConflict {
				t.Errorf("error %#v, want a failed/conflict problem", err)
			}
			for _, s := range tc.behind {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("reason %q lacks %q", err, s)
				}
			}
		})
	}
}
