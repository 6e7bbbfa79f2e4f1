package deltalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"
)

// Real-writer layout benchmarks (issue #9, BENCHMARKS.md). Tables:
//
//   - pgo-*: parquet-go, default options: one row group, protocol and
//     metaData its first two rows, 100 JSON commits after (layoutTableDir);
//     made here on first use.
//   - deltars-*, spark-*: a JSON log referencing N files checkpointed by
//     delta-rs (create_checkpoint) or Spark (DeltaLog.checkpoint), then 100
//     JSON commits; made by deltalog/bench/fixtures.sh into
//     $DELTASYNC_CACHE/bench and skipped when absent.
//
// The 10M-add tables are used only when DELTASYNC_BENCH_10M=1.
// DELTASYNC_BENCH_TABLES=name=dir[,name=dir...] adds tables of your own
// (local Delta tables; only _delta_log/ is read).
//
//	go test ./deltalog -run '^$' -bench BenchmarkLoadLayouts -benchmem -count 5

// layoutBenchTables returns (name, dir) for each fixture present.
func layoutBenchTables(b *testing.B) [][2]string {
	sizes := []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"1M", 1_000_000}}
	if os.Getenv("DELTASYNC_BENCH_10M") == "1" {
		sizes = append(sizes, struct {
			name string
			n    int
		}{"10M", 10_000_000})
	}
	var out [][2]string
	for _, s := range sizes {
		out = append(out, [2]string{"pgo-" + s.name, layoutTableDir(b, cpLayout{nFiles: s.n, pmAt: "first"}, fixtureAfter)})
	}
	base := os.Getenv("DELTASYNC_CACHE")
	if base == "" {
		base = filepath.Join(os.TempDir(), "deltasync-cache")
	}
	for _, writer := range []string{"deltars", "spark"} {
		for _, s := range sizes {
			dir := filepath.Join(base, "bench", writer+"-"+map[string]string{"10k": "10000", "1M": "1000000", "10M": "10000000"}[s.name]+"-r1")
			if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
				out = append(out, [2]string{writer + "-" + s.name, dir})
			}
		}
	}
	for _, nd := range strings.Split(os.Getenv("DELTASYNC_BENCH_TABLES"), ",") {
		if name, dir, ok := strings.Cut(nd, "="); ok {
			out = append(out, [2]string{name, dir})
		} else if nd != "" {
			b.Fatalf("DELTASYNC_BENCH_TABLES: %q is not name=dir", nd)
		}
	}
	return out
}

// TestGenerateLayoutFixtures makes the parquet-go layout tables for the
// benchmark script; it runs only when DELTASYNC_GEN_FIXTURES=1.
func TestGenerateLayoutFixtures(t *testing.T) {
	if os.Getenv("DELTASYNC_GEN_FIXTURES") != "1" {
		t.Skip("set DELTASYNC_GEN_FIXTURES=1 (deltalog/bench/fixtures.sh)")
	}
	for _, n := range []int{10_000, 1_000_000, 10_000_000} {
		start := time.Now()
		dir := layoutTableDir(t, cpLayout{nFiles: n, pmAt: "first"}, fixtureAfter)
		t.Logf("%s ready in %v", dir, time.Since(start).Round(time.Millisecond))
	}
}

// BenchmarkLoadLayouts measures Table.Load over fileblob on each fixture.
func BenchmarkLoadLayouts(b *testing.B) {
	ctx := context.Background()
	for _, tc := range layoutBenchTables(b) {
		b.Run(tc[0], func(b *testing.B) {
			bucket, err := fileblob.OpenBucket(tc[1], nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bucket.Close()
			gets := 0
			tbl := NewTable(bucket, tc[0], WithObserver(func(op string, _ time.Duration, _ error) {
				if op == "get" {
					gets++
				}
			}))
			if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
				b.Fatal(err)
			}
			gets = 0
			n := timeLoads(b, ctx, tbl)
			b.ReportMetric(float64(gets)/float64(n), "gets/op")
		})
	}
}
