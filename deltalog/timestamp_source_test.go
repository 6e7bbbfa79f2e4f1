package deltalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"gocloud.dev/blob/memblob"
)

// TestCommitTimestampSource: a snapshot says where its commit timestamp
// came from, over real corpus logs: an in-commit timestamp (cdc_ict_table,
// delta-rs with ICT from creation), commitInfo.timestamp (checkpoint,
// Spark) and, for a commit with no commitInfo at all (delta-0.1.0, whose
// v3 is also its checkpoint), the file's modification time, which it
// still returns as the value but marks as no content of the log.
func TestCommitTimestampSource(t *testing.T) {
	expected := readExpected(t)
	for _, tc := range []struct {
		table string
		want  TimestampSource
	}{
		{"cdc_ict_table", TimestampInCommit},
		{"checkpoint", TimestampCommitInfo},
		{"delta-0.1.0", TimestampModTime},
	} {
		t.Run(tc.table, func(t *testing.T) {
			snap, err := openCorpusTable(t, tc.table).Load(context.Background(), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if snap.CommitTimestampSource != tc.want || snap.CommitTimestampSource.FromContent() != (tc.want != TimestampModTime) {
				t.Fatalf("commit timestamp %d from %v (content %v), want from %v",
					snap.CommitTimestamp, snap.CommitTimestampSource, snap.CommitTimestampSource.FromContent(), tc.want)
			}
			exp := expected[tc.table]
			var want int64
			switch tc.want {
			case TimestampInCommit:
				want = *exp.LatestCommitInCommitTimestamp
			case TimestampCommitInfo:
				want = *exp.LatestCommitInfoTimestamp
			default:
				fi, err := os.Stat(filepath.Join(testcorpus.Dir(t), tc.table, "_delta_log", commitKey(snap.Version)[len("_delta_log/"):]))
				if err != nil {
					t.Fatal(err)
				}
				want = fi.ModTime().UnixMilli()
			}
			if snap.CommitTimestamp != want {
				t.Errorf("commit timestamp %d, want %d (%v)", snap.CommitTimestamp, want, tc.want)
			}
			if c := snap.Compact(); c.CommitTimestampSource != tc.want {
				t.Errorf("compact snapshot: source %v, want %v", c.CommitTimestampSource, tc.want)
			}
		})
	}
}

// TestCommitTimestampSourceFollowsNewestCommit: the source is the newest
// commit's, through Refresh: a log whose newest commit has no commitInfo
// is timed by its modification time (not content); a commit with
// commitInfo on top makes it commitInfo.timestamp, one without again the
// modification time. A commitInfo without a timestamp is no content either.
func TestCommitTimestampSourceFollowsNewestCommit(t *testing.T) {
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	put(t, mb, commitKey(0), identityV0(100, "a", "x"))
	put(t, mb, commitKey(1), addLine)
	b := NewTable(mb, "t")
	snap, err := b.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, s *Snapshot, want TimestampSource, ts int64) {
		t.Helper()
		if s.CommitTimestampSource != want {
			t.Errorf("%s: v%d timestamp %d from %v, want from %v", what, s.Version, s.CommitTimestamp, s.CommitTimestampSource, want)
		}
		if ts != 0 && s.CommitTimestamp != ts {
			t.Errorf("%s: timestamp %d, want %d", what, s.CommitTimestamp, ts)
		}
	}
	check("load, v1 without commitInfo", snap, TimestampModTime, 0)
	if age := time.Since(time.UnixMilli(snap.CommitTimestamp)); age < 0 || age > time.Hour {
		t.Errorf("v1's timestamp %d is not its fresh modification time", snap.CommitTimestamp)
	}
	put(t, mb, commitKey(2), commitText(200, addLine))
	snap, _, err = b.Refresh(ctx, snap.Compact(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("refresh, v2 with commitInfo", snap, TimestampCommitInfo, 200)
	check("compact", snap.Compact(), TimestampCommitInfo, 200)
	put(t, mb, commitKey(3), `{"commitInfo":{"operation":"WRITE"}}`+"\n"+addLine)
	if snap, _, err = b.Refresh(ctx, snap, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	check("refresh, v3 with a commitInfo without timestamp", snap, TimestampModTime, 0)
}
