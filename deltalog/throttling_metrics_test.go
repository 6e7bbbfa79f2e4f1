package deltalog

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestThrottlingByBucket: Throttling reports, per bucket, the throttling
// answers its requests got, the requests that failed as ErrThrottled, and
// the backoff and hold the bucket is under, while another bucket of the
// same store and client, never throttled, reads 0 throughout (and its
// in-flight limit stays max_in_flight_per_bucket).
func TestThrottlingByBucket(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	defer func(b, m time.Duration) { throttleBase, throttleMax = b, m }(throttleBase, throttleMax)
	throttleBase, throttleMax = time.Millisecond, 2*time.Millisecond
	s := newBucketsServer(t, "hot", "cold")
	s.seed(t, "hot", 1)
	s.seed(t, "cold", 1)
	g := newGates(t, StorageLimits{})
	hot, cold := openS3Tables(t, s, "hot", 1, g)[0], openS3Tables(t, s, "cold", 1, g)[0]
	rows := func() map[string]BucketThrottling {
		out := map[string]BucketThrottling{}
		for _, r := range g.Throttling() {
			if _, dup := out[r.Bucket]; dup {
				t.Errorf("bucket %s reported twice", r.Bucket)
			}
			out[r.Bucket] = r
		}
		if len(out) != 2 {
			t.Errorf("Throttling() names %v, want s3://hot and s3://cold (the endpoint left out)", out)
		}
		return out
	}
	wantCold := func(when string) {
		t.Helper()
		if c := rows()["s3://cold"]; c != (BucketThrottling{Bucket: "s3://cold", InFlightLimit: DefaultMaxInFlightPerBucket}) {
			t.Errorf("%s: cold bucket %+v, want all 0, in-flight limit %d", when, c, DefaultMaxInFlightPerBucket)
		}
	}
	if r := rows()["s3://hot"]; r != (BucketThrottling{Bucket: "s3://hot", InFlightLimit: DefaultMaxInFlightPerBucket}) {
		t.Errorf("before any request: hot bucket %+v, want all 0, in-flight limit %d", r, DefaultMaxInFlightPerBucket)
	}

	// A burst of 5 SlowDowns, ridden out: 5 throttled, none failed.
	const burst = 5
	left := burst
	s.mu.Lock()
	s.fault["hot"] = func(w http.ResponseWriter) bool {
		if left == 0 {
			return false
		}
		left--
		slowDown(w)
		return true
	}
	s.mu.Unlock()
	for i, err := range loadAll([]*Table{hot, cold}) {
		if err != nil {
			t.Fatalf("table %d: %v", i, err)
		}
	}
	if r := rows()["s3://hot"]; r.Throttled != burst || r.Failed != 0 {
		t.Errorf("after a burst of %d: hot bucket %+v, want %d throttled, 0 failed", burst, r, burst)
	}
	wantCold("after the burst")

	// Throttled on every request: the Load fails as ErrThrottled after
	// throttleRetries+1 answers, and the backoff is left at its top.
	s.mu.Lock()
	s.fault["hot"] = func(w http.ResponseWriter) bool { slowDown(w); return true }
	s.mu.Unlock()
	if _, err := hot.Load(context.Background(), LoadOptions{}); !errors.Is(err, ErrThrottled) {
		t.Fatalf("Load of a bucket throttling every request: %v, want ErrThrottled", err)
	}
	r := rows()["s3://hot"]
	if want := int64(burst + throttleRetries + 1); r.Throttled != want || r.Failed != 1 || r.Backoff != throttleMax {
		t.Errorf("after a failed Load: hot bucket %+v, want %d throttled, 1 failed, backoff %v", r, want, throttleMax)
	}
	wantCold("after the hot bucket's failure")

	// A Retry-After of 600 s holds the bucket: Held says for how long.
	throttleMax = 20 * time.Minute
	s.mu.Lock()
	s.fault["hot"] = func(w http.ResponseWriter) bool {
		w.Header().Set("Retry-After", "600")
		slowDown(w)
		return true
	}
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := hot.Load(ctx, LoadOptions{}); done <- err }()
	for deadline := time.Now().Add(time.Minute); rows()["s3://hot"].Held < 5*time.Minute; {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("hot bucket not held after a Retry-After of 600 s: %+v (%v)", rows()["s3://hot"], <-done)
		}
		time.Sleep(time.Millisecond)
	}
	wantCold("while the hot bucket is held")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("held Load: %v, want it still waiting when cancelled", err)
	}
}

// TestBucketName: the gate keys of each store, as metrics name them.
func TestBucketName(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "acct")
	for raw, want := range map[string]string{
		"s3://lake/t?endpoint=http%3A%2F%2Fminio%3A9000&region=us-east-1": "s3://lake",
		"s3://lake/t":      "s3://lake",
		"gs://lake/path/t": "gs://lake",
		"azblob://c/t":     "azblob://acct/c",
		"azblob://c/t?storage_account=other&domain=blob.core.windows.net": "azblob://other/c",
	} {
		if got := bucketName(gateKey(raw)); got != want {
			t.Errorf("bucketName(gateKey(%q)) = %q, want %q", raw, got, want)
		}
	}
}
