package deltalog

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"
)

// scaleLoad loads the table in dir through a counting bucket and returns the
// snapshot, the bytes and GETs spent on the checkpoint, and the bytes the
// heap allocated during the Load (after one warm-up Load).
type scaleResult struct {
	snap       *Snapshot
	cpBytes    int64
	cpGets     int
	gets       int
	allocBytes uint64
}

func scaleLoad(t *testing.T, dir string) scaleResult {
	t.Helper()
	fb, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	b, c := newCountingBucket(fb)
	var gets int
	obs := WithObserver(func(op string, _ time.Duration, _ error) {
		if op == "get" {
			gets++
		}
	})
	tbl := NewTable(b, "scale", obs)
	ctx := context.Background()
	if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	c.reset()
	gets = 0
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	snap, err := tbl.Load(ctx, LoadOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	cpKey := fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", fixtureCheckpoint)
	_, keys := c.counts()
	res := scaleResult{snap: snap, cpBytes: c.bytesRead(cpKey), gets: gets, allocBytes: after.TotalAlloc - before.TotalAlloc}
	for _, k := range keys {
		if k == cpKey {
			res.cpGets++
		}
	}
	return res
}

// checkFixtureSnapshot checks what Load returned from a layout fixture with
// `after` commits after its checkpoint.
func checkFixtureSnapshot(t *testing.T, snap *Snapshot, after int) {
	t.Helper()
	if want := int64(fixtureCheckpoint + after); snap.Version != want {
		t.Errorf("version = %d, want %d", snap.Version, want)
	}
	p := snap.Protocol
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || len(p.ReaderFeatures) != len(fixtureReaderFeatures) ||
		len(p.WriterFeatures) != len(fixtureWriterFeatures) {
		t.Errorf("protocol = %+v", p)
	}
	md := snap.Metadata
	if md.ID != fixtureTableID || md.SchemaString != fixtureSchema || len(md.PartitionColumns) != 1 || md.PartitionColumns[0] != "day" {
		t.Errorf("metadata = %+v", md)
	}
	if want := fixtureConfig(after >= 50); fmt.Sprint(md.Configuration) != fmt.Sprint(want) {
		t.Errorf("configuration = %v, want %v", md.Configuration, want)
	}
}

// TestLoadOneRowGroupMillionAdds: on a checkpoint laid out as a single-file
// writer lays it out (one row group of 1,000,000 adds with realistic paths
// and stats, protocol and metaData its first two rows) followed by 100
// JSON commits, Load reads at most 2 MiB of the checkpoint in a few ranged
// GETs and allocates a few MiB, not the hundreds of MiB that decoding
// every row of the protocol/metaData columns took.
func TestLoadOneRowGroupMillionAdds(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 1M-add checkpoint (cached in $DELTASYNC_CACHE)")
	}
	start := time.Now()
	dir := layoutTableDir(t, cpLayout{nFiles: 1_000_000, pmAt: "first"}, fixtureAfter)
	t.Logf("fixture %s ready in %v", dir, time.Since(start).Round(time.Millisecond))
	res := scaleLoad(t, dir)
	checkFixtureSnapshot(t, res.snap, fixtureAfter)
	t.Logf("checkpoint: %d bytes in %d GETs; Load: %d GETs, %.2f MiB allocated",
		res.cpBytes, res.cpGets, res.gets, float64(res.allocBytes)/(1<<20))
	if res.cpBytes > 2<<20 {
		t.Errorf("read %d bytes of the checkpoint, want at most 2 MiB", res.cpBytes)
	}
	if res.cpGets > 4 {
		t.Errorf("%d GETs of the checkpoint, want at most 4", res.cpGets)
	}
	// 100 commits plus _last_checkpoint plus the checkpoint's GETs.
	if want := fixtureAfter + 1 + res.cpGets; res.gets != want {
		t.Errorf("observer saw %d GETs, want %d", res.gets, want)
	}
	if res.allocBytes > 8<<20 {
		t.Errorf("Load allocated %.1f MiB, want at most 8 MiB", float64(res.allocBytes)/(1<<20))
	}
}
