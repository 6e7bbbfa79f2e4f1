package deltalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
//   - sparkmr-1M: the layout Spark writes at 1M files (parquet-mr, two
//     row groups, protocol and metaData in the second), made by parquet-go
//     here on first use (spark_fixture_test.go) and checked before timing.
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
	// Spark's layout at 1M files (spark_fixture_test.go): two row groups,
	// protocol and metaData in the second; made here on first use.
	out = append(out, [2]string{"sparkmr-1M", sparkLayoutTableDir(b)})
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
// benchmark script; it runs only when DELTASYNC_GEN_FIXTURES=1, for the add
// counts in DELTASYNC_GEN_FIXTURES_SIZES (space- or comma-separated;
// default "10000 1000000", the SIZES default of fixtures.sh). The 10M table
// (~5 min, 0.9 GB) is made only when asked for.
func TestGenerateLayoutFixtures(t *testing.T) {
	if os.Getenv("DELTASYNC_GEN_FIXTURES") != "1" {
		t.Skip("set DELTASYNC_GEN_FIXTURES=1 (deltalog/bench/fixtures.sh)")
	}
	sizes, err := fixtureSizes(os.Getenv("DELTASYNC_GEN_FIXTURES_SIZES"))
	if err != nil {
		t.Fatalf("DELTASYNC_GEN_FIXTURES_SIZES: %v", err)
	}
	for _, n := range sizes {
		start := time.Now()
		dir := layoutTableDir(t, cpLayout{nFiles: n, pmAt: "first"}, fixtureAfter)
		t.Logf("%s ready in %v", dir, time.Since(start).Round(time.Millisecond))
	}
}

// fixtureSizes parses a list of add counts ("10000 1000000", commas
// allowed); an empty list is the default, 10k and 1M.
func fixtureSizes(v string) ([]int, error) {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(fields) == 0 {
		return []int{10_000, 1_000_000}, nil
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive add count", f)
		}
		out = append(out, n)
	}
	return out, nil
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

// TestFixtureSizes pins what fixtures.sh's SIZES makes TestGenerateLayoutFixtures build.
func TestFixtureSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{{"", []int{10_000, 1_000_000}}, {"10000", []int{10_000}}, {" 10000  10000000 ", []int{10_000, 10_000_000}}, {"1000,2000", []int{1000, 2000}}} {
		got, err := fixtureSizes(tc.in)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("fixtureSizes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"10k", "0", "-5"} {
		if _, err := fixtureSizes(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("fixtureSizes(%q): err %v, want one naming it", bad, err)
		}
	}
}
