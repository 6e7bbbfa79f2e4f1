package deltalog

import (
	"context"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"
)

// benchShapes are the fixture sizes: the 1M-file table and a
// 10k-file one to check that Load does not grow with the file count.
var benchShapes = []struct {
	name   string
	nFiles int
}{
	{"files=10k", 10_000},
	{"files=1M", 1_000_000},
}

// BenchmarkLoad measures Table.Load (protocol + metadata) of a table whose
// checkpoint holds N add actions, followed by 100 JSON commits (metaData
// changed 50 commits back), read from a local directory through fileblob.
// The fixture is generated once into $DELTASYNC_CACHE/bench (~1 min and
// ~180 MB for 1M files).
//
//	go test ./deltalog -run '^$' -bench BenchmarkLoad -benchmem -count 10
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	for _, shape := range benchShapes {
		b.Run(shape.name, func(b *testing.B) {
			dir := fixtureDir(b, shape.nFiles)
			bucket, err := fileblob.OpenBucket(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bucket.Close()
			var lists, gets int
			count := WithObserver(func(op string, _ time.Duration, _ error) {
				if op == "list" {
					lists++
				} else {
					gets++
				}
			})
			tbl := NewTable(bucket, shape.name, count)
			snap, err := tbl.Load(ctx, LoadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if snap.Version != fixtureLatest {
				b.Fatalf("Load version %d, want %d", snap.Version, fixtureLatest)
			}
			lists, gets = 0, 0
			n := timeLoads(b, ctx, tbl)
			b.ReportMetric(float64(lists)/float64(n), "lists/op")
			b.ReportMetric(float64(gets)/float64(n), "gets/op")
		})
	}
}

// timeLoads is the timed part of every Load benchmark: it loads tbl b.N
// times from the state it is in, reports allocations and the process CPU per
// Load (cpu-ms/op), and returns how many Loads ran, for per-op counters.
func timeLoads(b *testing.B, ctx context.Context, tbl *Table) int {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/1e6, "cpu-ms/op")
	return n
}

// BenchmarkLoadPooled is BenchmarkLoad with the process-wide MemoryPool the
// daemon always sets (storage.max_read_mib's default, 1 GiB): what every
// budget take and give costs once it also reserves from the pool. Compare
// with BenchmarkLoad (benchstat).
//
//	go test ./deltalog -run '^$' -bench 'BenchmarkLoad(Pooled)?$' -benchmem -count 10
func BenchmarkLoadPooled(b *testing.B) {
	ctx := context.Background()
	for _, shape := range benchShapes {
		b.Run(shape.name, func(b *testing.B) {
			bucket, err := fileblob.OpenBucket(fixtureDir(b, shape.nFiles), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bucket.Close()
			pool := NewMemoryPool(1 << 30)
			tbl := NewTable(bucket, shape.name, WithMemoryPool(pool))
			timeLoads(b, ctx, tbl)
			if pool.InUse() != 0 {
				b.Fatalf("pool holds %d bytes after the Loads", pool.InUse())
			}
		})
	}
}
