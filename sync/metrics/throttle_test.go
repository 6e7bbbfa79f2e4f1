package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/deltasync/deltasync/deltalog"
)

// throttlingS3 is gofakes3 with buckets "hot" and "cold", each holding one
// Delta table at t; throttle makes "hot" answer its next requests with
// 503 SlowDown.
type throttlingS3 struct {
	params string
	mu     stdsync.Mutex
	left   int    // SlowDowns still to send; -1: every request
	after  string // their Retry-After
}

func newThrottlingS3(t *testing.T) *throttlingS3 {
	t.Helper()
	backend := s3mem.New()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"11111111-1111-1111-1111-111111111111","format":{"provider":"parquet","options":{}},` +
		`"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}",` +
		`"partitionColumns":[],"configuration":{},"createdTime":1700000000000}}` + "\n"
	for _, b := range []string{"hot", "cold"} {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if _, err := backend.PutObject(b, "t/_delta_log/00000000000000000000.json", map[string]string{},
			strings.NewReader(commit), int64(len(commit)), nil); err != nil {
			t.Fatal(err)
		}
	}
	s := &throttlingS3{}
	fake := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hot") {
			s.mu.Lock()
			throttle := s.left != 0
			if s.left > 0 {
				s.left--
			}
			after := s.after
			s.mu.Unlock()
			if throttle {
				if after != "" {
					w.Header().Set("Retry-After", after)
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s.params = "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	return s
}

func (s *throttlingS3) throttle(n int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left, s.after = n, retryAfter
}

// bucketSeries gathers reg's series of name by their bucket label.
func bucketSeries(t *testing.T, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var bucket string
			for _, l := range m.GetLabel() {
				if l.GetName() == "bucket" {
					bucket = l.GetValue()
				}
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			out[bucket] = v
		}
	}
	return out
}

// TestStorageThrottlingSeries: once the daemon hands its storage gates
// over, each bucket a table was opened on has its throttling series. A
// bucket that answers 3 SlowDowns reads 3 in
// deltasync_storage_throttled_total while another bucket of the same
// store reads 0; a Retry-After holds the throttled bucket alone, and
// deltasync_storage_held_seconds says for how long.
// deltasync_storage_in_flight_limit reads max_in_flight_per_bucket for
// both until hot is throttled after a success, then half that for hot
// alone.
func TestStorageThrottlingSeries(t *testing.T) {
	s := newThrottlingS3(t)
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	names := []string{"deltasync_storage_throttled_total", "deltasync_storage_throttled_failures_total",
		"deltasync_storage_backoff_seconds", "deltasync_storage_held_seconds"}
	const limitName = "deltasync_storage_in_flight_limit"
	if deltalog.DefaultMaxInFlightPerBucket != 64 {
		t.Fatalf("want text below assumes max_in_flight_per_bucket 64, not %d", deltalog.DefaultMaxInFlightPerBucket)
	}
	gates, err := deltalog.NewStorageGates(deltalog.StorageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	var tables []*deltalog.Table
	for _, b := range []string{"hot", "cold"} {
		tbl, err := deltalog.Open(context.Background(), "s3://"+b+"/t"+s.params, deltalog.WithStorageGates(gates))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tbl.Close() })
		tables = append(tables, tbl)
	}
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 0 {
		t.Fatalf("%d throttling series (err %v) before the gates are given, want 0", n, err)
	}
	m.ObserveStorageGates(gates)
	want := `
# HELP deltasync_storage_in_flight_limit Requests the bucket may have in flight now: storage.max_in_flight_per_bucket until the store throttles it, halved by each throttled window that followed a success, raised by one per limit's worth of successes.
# TYPE deltasync_storage_in_flight_limit gauge
deltasync_storage_in_flight_limit{bucket="s3://cold"} 64
deltasync_storage_in_flight_limit{bucket="s3://hot"} 64
# HELP deltasync_storage_throttled_failures_total Storage requests of the bucket that were still throttled after the shared backoff's retries and failed (the table's read fails with reason storage).
# TYPE deltasync_storage_throttled_failures_total counter
deltasync_storage_throttled_failures_total{bucket="s3://cold"} 0
deltasync_storage_throttled_failures_total{bucket="s3://hot"} 0
# HELP deltasync_storage_throttled_total Throttling answers the bucket's storage requests got (S3 503 SlowDown, GCS 429 or 503, Azure 503, 429 or 500 OperationTimedOut), each retried after the bucket's shared backoff or, past the retries, failed.
# TYPE deltasync_storage_throttled_total counter
deltasync_storage_throttled_total{bucket="s3://cold"} 0
deltasync_storage_throttled_total{bucket="s3://hot"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), append(names[:2:2], limitName)...); err != nil {
		t.Error(err)
	}

	const n = 3
	s.throttle(n, "")
	for i, tbl := range tables {
		if _, err := tbl.Load(context.Background(), deltalog.LoadOptions{}); err != nil {
			t.Fatalf("table %d: %v", i, err)
		}
	}
	got := bucketSeries(t, reg, "deltasync_storage_throttled_total")
	if got["s3://hot"] != n || got["s3://cold"] != 0 || len(got) != 2 {
		t.Errorf("deltasync_storage_throttled_total after %d SlowDowns on hot: %v, want hot %d, cold 0", n, got, n)
	}
	if got := bucketSeries(t, reg, "deltasync_storage_throttled_failures_total"); got["s3://hot"] != 0 || got["s3://cold"] != 0 {
		t.Errorf("deltasync_storage_throttled_failures_total after a burst ridden out: %v, want 0 for both", got)
	}
	for _, name := range names[2:] {
		if got := bucketSeries(t, reg, name); got["s3://cold"] != 0 || len(got) != 2 {
			t.Errorf("%s: %v, want a series per bucket, cold's 0", name, got)
		}
	}
	// The SlowDowns came before any of hot's requests succeeded: nothing
	// says fewer at once would get through, so the limit stays.
	if got := bucketSeries(t, reg, limitName); got["s3://hot"] != 64 || got["s3://cold"] != 64 || len(got) != 2 {
		t.Errorf("%s after a burst refused before any success: %v, want 64 for both", limitName, got)
	}

	// A Retry-After of 600 s (capped at the backoff's 10 s top) holds hot.
	s.throttle(-1, "600")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := tables[0].Load(ctx, deltalog.LoadOptions{}); done <- err }()
	for deadline := time.Now().Add(time.Minute); bucketSeries(t, reg, "deltasync_storage_throttled_total")["s3://hot"] == n; {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no further throttling answer seen in a minute (%v)", <-done)
		}
		time.Sleep(time.Millisecond)
	}
	held, backoff := bucketSeries(t, reg, "deltasync_storage_held_seconds"), bucketSeries(t, reg, "deltasync_storage_backoff_seconds")
	if held["s3://hot"] < 5 || held["s3://cold"] != 0 {
		t.Errorf("deltasync_storage_held_seconds while hot waits out a Retry-After: %v, want hot's over 5, cold's 0", held)
	}
	if backoff["s3://hot"] <= 0 || backoff["s3://cold"] != 0 {
		t.Errorf("deltasync_storage_backoff_seconds while hot is throttled: %v, want hot's above 0, cold's 0", backoff)
	}
	// Throttled after the first Load's successes: hot's limit is halved,
	// cold's untouched.
	if got := bucketSeries(t, reg, limitName); got["s3://hot"] != 32 || got["s3://cold"] != 64 {
		t.Errorf("%s after hot is throttled following successes: %v, want hot 32 (halved), cold 64", limitName, got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("held Load: %v, want it still waiting when cancelled", err)
	}
}
