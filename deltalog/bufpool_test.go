package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// scribblePools overwrites every buffer now in the pools with 0xFF and
// puts it back, so a snapshot that still referred to a recycled buffer
// would show it.
func scribblePools() (n int) {
	for c := minPooledClass; c <= maxPooledClass; c++ {
		var held []*[]byte
		for {
			p, _ := bufPools[c].Get().(*[]byte)
			if p == nil {
				break
			}
			b := (*p)[:cap(*p)]
			for i := range b {
				b[i] = 0xFF
			}
			held = append(held, p)
		}
		for _, p := range held {
			bufPools[c].Put(p)
		}
		n += len(held)
	}
	return n
}

// TestPooledBuffersLeaveSnapshotsIntact: the buffers a Load read its files
// into are recycled (commits and checkpoint blocks). Every corpus table is
// loaded, the pools are scribbled over after each Load, and at the end
// every snapshot and error still reads as it did right after its Load.
func TestPooledBuffersLeaveSnapshotsIntact(t *testing.T) {
	type kept struct {
		name string
		snap *Snapshot
		err  error
		json []byte
		msg  string
	}
	var all []kept
	recycled := 0
	for _, row := range readManifest(t) {
		snap, err := openCorpusTable(t, row.Name).Load(context.Background(), LoadOptions{})
		k := kept{name: row.Name, snap: snap, err: err}
		if err != nil {
			k.msg = err.Error()
		} else if k.json, err = json.Marshal(snap); err != nil {
			t.Fatal(err)
		}
		all = append(all, k)
		recycled += scribblePools()
	}
	if recycled == 0 {
		t.Fatal("no Load returned a buffer to the pool; the test checks nothing")
	}
	for _, k := range all {
		if k.err != nil {
			if got := k.err.Error(); got != k.msg {
				t.Errorf("%s: error changed after later loads:\n was %s\n now %s", k.name, k.msg, got)
			}
			continue
		}
		got, err := json.Marshal(k.snap)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, k.json) {
			t.Errorf("%s: snapshot changed after later loads:\n was %s\n now %s", k.name, k.json, got)
		}
	}
	t.Logf("%d tables, %d pooled buffers scribbled over", len(all), recycled)
}

// TestLoadReusesReadBuffers: loading a table again reads its commits and
// checkpoint into recycled buffers, so the bytes a Load allocates fall
// below the size of the files it reads. A bound, not a timing.
func TestLoadReusesReadBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// 20 commits of ~16 KiB each (adds with stats, as writers make them).
	var read int64
	for v := 0; v < 20; v++ {
		var b bytes.Buffer
		if v == 0 {
			b.WriteString(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n")
			b.WriteString(`{"metaData":{"id":"id","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":1}}` + "\n")
		}
		for i := 0; b.Len() < 16<<10; i++ {
			fmt.Fprintf(&b, `{"add":{"path":"part-%05d-%04d.parquet","partitionValues":{},"size":1234,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":10,\"minValues\":{\"a\":1},\"maxValues\":{\"a\":9},\"nullCount\":{\"a\":0}}"}}`+"\n", v, i)
		}
		name := filepath.Join(logDir, fmt.Sprintf("%020d.json", v))
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		read += int64(b.Len())
	}
	tbl := NewTable(openDir(t, dir), "pooled")
	load := func() {
		if _, err := tbl.Load(context.Background(), LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	load() // fills the pools
	perLoad := allocatedBytes(10, load)
	t.Logf("a Load of %d bytes of commits allocates %d bytes", read, perLoad)
	if perLoad >= uint64(read)/2 {
		t.Fatalf("a Load allocates %d bytes for %d bytes of commits: its read buffers are not reused", perLoad, read)
	}
}

// openDir opens dir as a fileblob bucket closed at the end of the test.
func openDir(t *testing.T, dir string) *blob.Bucket {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// allocatedBytes returns the heap bytes f allocates per call, averaged over
// runs, with the collector off so that the pools are not emptied midway.
func allocatedBytes(runs int, f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}
