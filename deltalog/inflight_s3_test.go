package deltalog

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

	"github.com/deltasync/deltasync/internal/fakes3"
	"github.com/johannesboyne/gofakes3"
)

// bucketsServer is gofakes3 with several buckets behind a handler that
// counts, per bucket (path-style URLs), the requests in flight (now and at
// most) and served, and can answer a bucket's requests with a fault.
type bucketsServer struct {
	srv    *httptest.Server
	params string // URL parameters of s3:// table URLs on it

	mu      stdsync.Mutex
	now     map[string]int
	peak    map[string]int
	served  map[string]int
	total   int
	peakAll int
	delay   time.Duration
	fault   map[string]func(w http.ResponseWriter) bool // true: answered
	faulted map[string]int
}

func newBucketsServer(t testing.TB, buckets ...string) *bucketsServer {
	t.Helper()
	backend := fakes3.NewIndexed()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	s := &bucketsServer{now: map[string]int{}, peak: map[string]int{}, served: map[string]int{},
		fault: map[string]func(http.ResponseWriter) bool{}, faulted: map[string]int{}}
	fake := gofakes3.New(backend).Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(out http.ResponseWriter, r *http.Request) {
		bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		// The answer is recorded whole and sent only after the request
		// stops counting as in flight: sent while the handler still ran,
		// the client could take it, free its slot and send the next
		// request before this one was counted out, and the server would
		// see one more in flight than the client ever had.
		w := httptest.NewRecorder()
		defer func() {
			for k, v := range w.Header() {
				out.Header()[k] = v
			}
			out.WriteHeader(w.Code)
			_, _ = out.Write(w.Body.Bytes())
		}()
		s.mu.Lock()
		s.now[bucket]++
		s.total++
		s.peak[bucket] = max(s.peak[bucket], s.now[bucket])
		s.peakAll = max(s.peakAll, s.total)
		s.served[bucket]++
		delay, fault := s.delay, s.fault[bucket]
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.now[bucket]--
			s.total--
			s.mu.Unlock()
		}()
		if delay > 0 {
			time.Sleep(delay)
		}
		if fault != nil {
			s.mu.Lock() // a fault's state is guarded by mu too
			answered := fault(w)
			if answered {
				s.faulted[bucket]++
			}
			s.mu.Unlock()
			if answered {
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	s.params = "?endpoint=" + url.QueryEscape(s.srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	return s
}

// seed writes n copies of the corpus checkpoint table (t0..t<n-1>) into
// bucket, through a client of its own.
func (s *bucketsServer) seed(t *testing.T, bucket string, n int) {
	t.Helper()
	ctx := context.Background()
	b := openTable(t, "s3://"+bucket+s.params, Credentials{S3AccessKeyID: "AKIDSEED", S3SecretAccessKey: "secret"})
	seedCheckpointCopies(t, n, func(key string, data []byte) error { return b.WriteAll(ctx, key, data, nil) })
}

// reset zeroes the counts.
func (s *bucketsServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak, s.served, s.faulted, s.peakAll = map[string]int{}, map[string]int{}, map[string]int{}, 0
}

// ambientS3 makes Open use the ambient credential chain, so every table
// of the server shares one client (s3Clients), as a fleet's tables do.
func ambientS3(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDAMBIENT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// newGates returns storage gates of the test's own with the limits l.
func newGates(t *testing.T, l StorageLimits) *StorageGates {
	t.Helper()
	g, err := NewStorageGates(l)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// openS3Tables opens t0..t<n-1> of bucket through gates g.
func openS3Tables(t *testing.T, s *bucketsServer, bucket string, n int, g *StorageGates) []*Table {
	t.Helper()
	var tbls []*Table
	for i := range n {
		tbl, err := Open(context.Background(), fmt.Sprintf("s3://%s/t%d%s", bucket, i, s.params), WithStorageGates(g))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tbl.Close() })
		tbls = append(tbls, tbl)
	}
	return tbls
}

// loadAll loads every table at once and returns the errors by table.
func loadAll(tbls []*Table) []error {
	errs := make([]error, len(tbls))
	var wg stdsync.WaitGroup
	for i, tbl := range tbls {
		wg.Go(func() {
			snap, err := tbl.Load(context.Background(), LoadOptions{})
			if err == nil && snap.Version != 14 {
				err = fmt.Errorf("version %d, want 14", snap.Version)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

// TestStorageInFlightLimits: however many tables are loaded at once (here
// 48 Loads of 7 requests each, up to 5 of them concurrent per Load), the
// requests in flight to one bucket never exceed max_in_flight_per_bucket
// and those of the process never exceed max_in_flight, counted by the
// server. Without the limits the server saw every Load's requests at once.
func TestStorageInFlightLimits(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	s := newBucketsServer(t, "one", "two", "three")
	for _, b := range []string{"one", "two", "three"} {
		s.seed(t, b, 16)
	}
	const perBucket, process = 3, 5
	g := newGates(t, StorageLimits{MaxInFlight: process, MaxInFlightPerBucket: perBucket})
	var tbls []*Table
	for _, b := range []string{"one", "two", "three"} {
		tbls = append(tbls, openS3Tables(t, s, b, 16, g)...)
	}
	s.reset()
	s.delay = 2 * time.Millisecond // overlap the requests
	for i, err := range loadAll(tbls) {
		if err != nil {
			t.Errorf("table %d: %v", i, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("peak in flight: %d in the process, by bucket %v; served %v", s.peakAll, s.peak, s.served)
	if s.peakAll > process {
		t.Errorf("%d requests in flight at once, want at most max_in_flight = %d", s.peakAll, process)
	}
	for b, p := range s.peak {
		if p > perBucket {
			t.Errorf("bucket %s: %d requests in flight at once, want at most max_in_flight_per_bucket = %d", b, p, perBucket)
		}
	}
	if got := g.InFlight(); got != 0 {
		t.Errorf("InFlight() = %d after every Load returned, want 0", got)
	}
}

func TestNewStorageGatesRejectsNegative(t *testing.T) {
	if _, err := NewStorageGates(StorageLimits{MaxInFlight: -1}); err == nil {
		t.Error("NewStorageGates(MaxInFlight: -1) = nil error, want one")
	}
	l := StorageLimits{MaxInFlight: 8, MaxInFlightPerBucket: 64}.withDefaults()
	if l.MaxInFlightPerBucket != 8 {
		t.Errorf("per-bucket limit %d above the process's 8 not capped", l.MaxInFlightPerBucket)
	}
}

// slowDown answers like S3 throttling a bucket.
func slowDown(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
}

// TestS3SlowDownSparesOtherBuckets: a SlowDown burst on one bucket is
// ridden out by that bucket's tables under its shared backoff (a Load
// that meets more of it than throttleRetries fails as ErrThrottled), and
// the tables of another bucket on the same client neither fail nor send
// one request more; a transient 500 there is still retried by the SDK
// (the retry quota gocloud leaves off stays off). Before, the SDK retried
// each SlowDown on its own, three attempts per request, and every Load
// that met the burst failed with SlowDown.
func TestS3SlowDownSparesOtherBuckets(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	defer func(b, m time.Duration) { throttleBase, throttleMax = b, m }(throttleBase, throttleMax)
	throttleBase, throttleMax = time.Millisecond, 4*time.Millisecond
	s := newBucketsServer(t, "hot", "cold")
	s.seed(t, "hot", 8)
	s.seed(t, "cold", 8)
	g := newGates(t, StorageLimits{})
	hot, cold := openS3Tables(t, s, "hot", 8, g), openS3Tables(t, s, "cold", 8, g)
	s.reset()

	// The burst: the hot bucket answers its next 240 requests with SlowDown.
	burst := 240
	s.mu.Lock()
	s.fault["hot"] = func(w http.ResponseWriter) bool {
		if burst == 0 {
			return false
		}
		burst--
		slowDown(w)
		return true
	}
	s.mu.Unlock()
	// The hot tables are loaded, all at once, until the burst is over;
	// each Load either rides it out or fails as throttled.
	var hotErrs int
	for round := 0; ; round++ {
		s.mu.Lock()
		left := burst
		s.mu.Unlock()
		if left == 0 {
			break
		}
		if round > 100 {
			t.Fatalf("burst not over after %d rounds (%d SlowDowns left)", round, left)
		}
		for _, err := range loadAll(hot) {
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrThrottled) {
				t.Errorf("hot Load failed with %v, want ErrThrottled (or success)", err)
			}
			hotErrs++
		}
	}
	t.Logf("%d hot Loads failed as throttled during the burst", hotErrs)

	// The cold bucket then has one transient 500 on its first request.
	transient := 1
	s.mu.Lock()
	s.fault["cold"] = func(w http.ResponseWriter) bool {
		if transient == 0 {
			return false
		}
		transient--
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
		return true
	}
	s.mu.Unlock()
	for i, err := range loadAll(cold) {
		if err != nil {
			t.Errorf("cold table %d: %v (a SlowDown burst on another bucket must not fail it)", i, err)
		}
	}
	s.mu.Lock()
	coldServed := s.served["cold"]
	s.mu.Unlock()
	// 8 Loads of 7 requests each, plus the one retried transient.
	if want := 8*7 + 1; coldServed != want {
		t.Errorf("cold bucket served %d requests, want %d", coldServed, want)
	}
	if cg := g.gate(gateKey("s3://cold/t0" + s.params)); cg.throttledCount() != 0 {
		t.Errorf("cold bucket's gate saw %d throttled answers, want 0", cg.throttledCount())
	}
	// The hot bucket has recovered.
	for i, err := range loadAll(hot) {
		if err != nil {
			t.Errorf("hot table %d after the burst: %v", i, err)
		}
	}
}

// TestThrottledHintListsNothing: when the store throttles the read of
// _last_checkpoint past its retries, the Load fails as throttled instead
// of falling back to listing the whole log, which would only send the
// throttled bucket more requests.
func TestThrottledHintListsNothing(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ambientS3(t)
	defer func(b, m time.Duration) { throttleBase, throttleMax = b, m }(throttleBase, throttleMax)
	throttleBase, throttleMax = time.Millisecond, 2*time.Millisecond
	s := newBucketsServer(t, "hot")
	s.seed(t, "hot", 1)
	tbl := openS3Tables(t, s, "hot", 1, newGates(t, StorageLimits{}))[0]
	s.reset()
	s.mu.Lock()
	s.fault["hot"] = func(w http.ResponseWriter) bool { slowDown(w); return true }
	s.mu.Unlock()
	_, err := tbl.Load(context.Background(), LoadOptions{})
	if !errors.Is(err, ErrThrottled) {
		t.Fatalf("Load of a throttled bucket: %v, want ErrThrottled", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.served["hot"]; n > throttleRetries+1 {
		t.Errorf("%d requests to the throttled bucket, want at most %d (the hint's GET and its retries, no LIST)", n, throttleRetries+1)
	}
}
