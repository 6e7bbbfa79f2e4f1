package deltalog

import (
	"context"
	"fmt"
	"os"
	"strconv"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSteadyRefreshS3 is the steady cycle of a fleet on S3 at the
// deltalog level: N unchanged tables, each checked with Refresh (one
// LIST after its latest version), through the shared client and the
// storage limits, against gofakes3 delaying every request. It reports
// the wall time of one cycle over all tables, storage requests per table
// and the most requests in flight the server saw. Environment:
//
//	DELTASYNC_BENCH_S3_TABLES=1000       tables (in one bucket)
//	DELTASYNC_BENCH_S3_LATENCY=20ms      delay of every request
//	DELTASYNC_BENCH_S3_WORKERS=1024      tables checked at once by the caller
//	DELTASYNC_BENCH_S3_PER_BUCKET=64     storage.max_in_flight_per_bucket
func BenchmarkSteadyRefreshS3(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	n := envInt(b, "DELTASYNC_BENCH_S3_TABLES", 1000)
	workers := envInt(b, "DELTASYNC_BENCH_S3_WORKERS", 1024)
	perBucket := envInt(b, "DELTASYNC_BENCH_S3_PER_BUCKET", DefaultMaxInFlightPerBucket)
	latency := 20 * time.Millisecond
	if v := os.Getenv(s3BenchLatencyEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("%s: %v", s3BenchLatencyEnv, err)
		}
		latency = d
	}
	b.Setenv("AWS_ACCESS_KEY_ID", "AKIDAMBIENT")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s := newBucketsServer(b, "fleet")
	ctx := context.Background()
	seed := openTable(b, "s3://fleet"+s.params, Credentials{S3AccessKeyID: "AKIDSEED", S3SecretAccessKey: "secret"})
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"id","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":1}}` + "\n"
	forEach(n, 64, func(i int) {
		if err := seed.WriteAll(ctx, fmt.Sprintf("t%d/%s", i, commitKey(0)), []byte(commit), nil); err != nil {
			b.Error(err)
		}
	})
	gates, err := NewStorageGates(StorageLimits{MaxInFlightPerBucket: perBucket, MaxInFlight: max(perBucket, DefaultMaxInFlight)})
	if err != nil {
		b.Fatal(err)
	}
	tbls := make([]*Table, n)
	snaps := make([]*Snapshot, n)
	for i := range n {
		tbl, err := Open(ctx, fmt.Sprintf("s3://fleet/t%d%s", i, s.params), WithStorageGates(gates))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = tbl.Close() })
		tbls[i] = tbl
	}
	forEach(n, workers, func(i int) {
		snap, err := tbls[i].Load(ctx, LoadOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		snaps[i] = snap
	})
	if b.Failed() {
		b.FailNow()
	}
	s.mu.Lock()
	s.delay = latency
	s.mu.Unlock()
	s.reset()
	var unchanged atomic.Int64
	cycles := 0
	start := time.Now()
	for b.Loop() {
		cycles++
		forEach(n, workers, func(i int) {
			_, how, err := tbls[i].Refresh(ctx, snaps[i], LoadOptions{})
			if err != nil {
				b.Error(err)
			}
			if how == Unchanged {
				unchanged.Add(1)
			}
		})
	}
	wall := time.Since(start)
	s.mu.Lock()
	served, peak := s.served["fleet"], s.peakAll
	s.mu.Unlock()
	if got := unchanged.Load(); got != int64(cycles*n) {
		b.Errorf("%d of %d checks unchanged", got, cycles*n)
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(cycles), "ms/cycle")
	b.ReportMetric(float64(served)/float64(cycles*n), "requests/table")
	b.ReportMetric(float64(peak), "peak-in-flight")
	b.ReportMetric(float64(wall.Microseconds())/float64(cycles*n), "µs/table")
}

// forEach runs f(0..n-1) on up to workers goroutines.
func forEach(n, workers int, f func(int)) {
	var next atomic.Int64
	var wg stdsync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

func envInt(b *testing.B, key string, def int) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", key, v)
	}
	return n
}
