package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
)

// writeBareLog writes commits 0..n-1 of table id at dir with no commitInfo
// at all (as old writers and hand-made logs do), each file's modification
// time set to mtime(v): the only timestamp such a log has.
func writeBareLog(t *testing.T, dir, id string, n int64, mtime func(v int64) time.Time) {
	t.Helper()
	schema := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`
	add := `{"add":{"path":"part-%d.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for v := range n {
		text := fmt.Sprintf(add, v)
		if v == 0 {
			md, _ := json.Marshal(map[string]any{"id": id, "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
				"schemaString": schema, "partitionColumns": []string{}, "configuration": map[string]string{}})
			text = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" + `{"metaData":` + string(md) + "}\n"
		}
		p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime(v), mtime(v)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRestoredLogWithoutCommitInfoStaysBehind: a log whose commits carry
// no commitInfo is timed by its files' modification times, which a copy
// makes fresh. Synced at v3, then replaced by a restored copy of its v0..v1
// (same metaData.id, fresh modification times, newer than v3's): a daemon
// just restarted (no metaData.id read before) and the one that kept
// running both flag it as behind, saying the commit time is the file's
// and no evidence, and nothing is written. (Before, the fresh
// modification time "newer than the watermark's commit" made the log
// "recreated", and v1 was written over the v3 record.) On uctest and on
// the real Unity Catalog server.
func TestRestoredLogWithoutCommitInfoStaysBehind(t *testing.T) {
	onUCServers(t, func(t *testing.T, e *env) {
		const table = "restored_bare"
		dir := filepath.Join(t.TempDir(), table)
		old := time.UnixMilli(1_700_000_000_000)
		writeBareLog(t, dir, "bare-table", 4, func(v int64) time.Time { return old.Add(time.Duration(v) * time.Second) })
		snap := snapshot(t, dir)
		if snap.CommitTimestampSource.FromContent() || snap.CommitTimestamp != old.Add(3*time.Second).UnixMilli() {
			t.Fatalf("v3 timed %d from %v, want v3's modification time", snap.CommitTimestamp, snap.CommitTimestampSource)
		}
		if _, err := sync.Register(context.Background(), kindOf(e.client), snap, e.name(table), "file://"+dir); err != nil {
			t.Fatal(err)
		}
		running := e.daemon(table)
		inSyncFor(t, running, 1, "before the restore")
		before := e.record(table)

		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		fresh := time.Now()
		writeBareLog(t, dir, "bare-table", 2, func(int64) time.Time { return fresh })
		for _, d := range []struct {
			what string
			r    *sync.Reconciler
		}{{"daemon just restarted", e.daemon(table)}, {"running daemon", running}} {
			res := cycle(t, d.r, d.what+" after the restore")
			if res.Outcome != sync.OutcomeFailed || res.ErrorReason != sync.ReasonConflict ||
				!strings.Contains(res.Reason, "the log is behind, not another table") ||
				!strings.Contains(res.Reason, "is the file's modification time, not evidence") {
				t.Fatalf("%s: %s/%s %s (%s), want failed/conflict: behind, the commit time being the file's", d.what, res.Outcome, res.Status, res.ErrorReason, res.Reason)
			}
		}
		after := e.record(table)
		if after.Etag != before.Etag || deref(after.LastCommitVersion) != 3 {
			t.Errorf("the record was written: etag %s -> %s, watermark v%d", before.Etag, after.Etag, deref(after.LastCommitVersion))
		}
	})
}
