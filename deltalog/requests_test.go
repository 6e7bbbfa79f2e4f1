package deltalog

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// countedCorpusTable opens a corpus table behind a countingBucket.
func countedCorpusTable(t *testing.T, name string) (*Table, *countingBucket) {
	t.Helper()
	fb, err := fileblob.OpenBucket(filepath.Join(testcorpus.Dir(t), name), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Close() })
	b, c := newCountingBucket(fb)
	return NewTable(b, name), c
}

// uniqueKeys drops repeated keys (ranged Parquet reads), keeping order.
func uniqueKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestLoadRequestBudget: a load is one LIST plus one GET each of the hint
// and of the files needed (a small checkpoint is one GET), the hint first.
// Above a checkpoint the commits and the checkpoint are fetched in one
// window, so their order is not fixed; a log without a checkpoint (newest
// commit alone, then the full window) is TestLoadStopsAtNewestActions's.
func TestLoadRequestBudget(t *testing.T) {
	tbl, c := countedCorpusTable(t, "checkpoint")
	if _, err := tbl.Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	lists, gets := c.counts()
	if lists != 1 {
		t.Errorf("LIST requests = %d, want 1", lists)
	}
	want := []string{
		"_delta_log/_last_checkpoint",
		"_delta_log/00000000000000000014.json",
		"_delta_log/00000000000000000013.json",
		"_delta_log/00000000000000000012.json",
		"_delta_log/00000000000000000011.json",
		"_delta_log/00000000000000000010.checkpoint.parquet",
	}
	// Within a prefetch window the order of GETs is not fixed.
	if diff := cmp.Diff(want, gets, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("GETs (-want +got):\n%s", diff)
	}
	if len(gets) > 0 && gets[0] != want[0] {
		t.Errorf("first GET is %s, want the hint %s", gets[0], want[0])
	}
}

// TestLoadNeverReadsUnneededFiles checks every loadable corpus table: one
// LIST (two only when the hint is unusable), and no GET of sidecars,
// checksums, unratified staged commits or commits covered by the checkpoint.
func TestLoadNeverReadsUnneededFiles(t *testing.T) {
	for _, row := range readManifest(t) {
		if strings.HasPrefix(row.Outcome, "error") {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			tbl, c := countedCorpusTable(t, row.Name)
			snap, err := tbl.Load(context.Background(), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lists, gets := c.counts()
			if lists != 1 {
				t.Errorf("LIST requests = %d, want 1", lists)
			}
			for _, k := range uniqueKeys(gets) {
				p := parseLogPath(k)
				switch {
				case p.Kind == kindLastCheckpoint:
				case p.Kind == kindUnknown, p.Kind == kindChecksum, p.Kind == kindStagedCommit:
					t.Errorf("read %s", k)
				case p.Kind == kindCommit && p.Version <= snap.state.cpVersion && p.Version != snap.Version:
					t.Errorf("read %s, covered by checkpoint %d", k, snap.state.cpVersion)
				case p.Kind != kindCommit && p.Kind != kindCompaction && p.Version != snap.state.cpVersion:
					t.Errorf("read %s, not the chosen checkpoint %d", k, snap.state.cpVersion)
				}
			}
		})
	}
}

// memTable copies a corpus table's _delta_log into a memblob bucket.
func memTable(t *testing.T, name string) (*Table, *blob.Bucket, *countingBucket) {
	t.Helper()
	mb := memblob.OpenBucket(nil)
	t.Cleanup(func() { mb.Close() })
	root := filepath.Join(testcorpus.Dir(t), name)
	testcorpus.ReadTree(t, filepath.Join(root, "_delta_log"), func(key string, data []byte) error {
		return mb.WriteAll(context.Background(), "_delta_log/"+key, data, nil)
	})
	b, c := newCountingBucket(mb)
	return NewTable(b, name), mb, c
}

// put writes a log file into the bucket.
func put(t *testing.T, b *blob.Bucket, key, content string) {
	t.Helper()
	if err := b.WriteAll(context.Background(), key, []byte(content), nil); err != nil {
		t.Fatal(err)
	}
}

// TestLoadStopsAtNewestActions: when the newest commit holds protocol and
// metaData, nothing older is read; when they are deep, reads come in
// growing windows and stop within one window of where they are found.
func TestLoadStopsAtNewestActions(t *testing.T) {
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	proto := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n"
	for v := int64(0); v < 40; v++ {
		text := fmt.Sprintf(commitInfoLine, v) + addLine
		if v == 0 || v == 39 {
			text += proto + metadataLine
		}
		put(t, mb, commitKey(v), text)
	}
	b, c := newCountingBucket(mb)
	snap, err := NewTable(b, "t").Load(ctx, LoadOptions{})
	if err != nil || snap.Version != 39 {
		t.Fatalf("Load = %v, %v", snap, err)
	}
	if _, gets := c.counts(); len(gets) != 2 || gets[1] != commitKey(39) {
		t.Errorf("GETs %v, want _last_checkpoint and commit 39 only", gets)
	}
	// Now only commit 0 has them: all 40 commits are needed, the newest
	// alone and then the other 39 at the full window (TestLoadRoundTrips).
	put(t, mb, commitKey(39), fmt.Sprintf(commitInfoLine, 39)+addLine)
	c.reset()
	if _, err := NewTable(b, "t").Load(ctx, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, gets := c.counts(); len(gets) != 41 {
		t.Errorf("%d GETs, want 41", len(gets))
	}
}
