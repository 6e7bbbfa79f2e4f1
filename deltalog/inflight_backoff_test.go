package deltalog

import (
	"context"
	"testing"
	"time"
)

// shortBackoff makes the gates' backoff short for one test: base 1 ms,
// cap 1 s (far enough apart that one step and the cap differ).
func shortBackoff(t *testing.T) {
	t.Helper()
	b, m := throttleBase, throttleMax
	t.Cleanup(func() { throttleBase, throttleMax = b, m })
	throttleBase, throttleMax = time.Millisecond, time.Second
}

// sendWindow sends n requests through g at once (all acquired before any
// is answered), answers every one as throttled or not, and returns the
// windows they were sent in.
func sendWindow(t *testing.T, g *bucketGate, n int, throttled bool) []uint64 {
	t.Helper()
	ctx := context.Background()
	var releases []func()
	var windows []uint64
	for range n {
		release, w, err := g.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
		windows = append(windows, w)
	}
	for i, release := range releases {
		g.record(throttled, 0, windows[i]) // then the slot frees, as in do
		release()
	}
	return windows
}

func limitOf(g *bucketGate) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// canSend reports how many requests g lets in flight at once now (up to
// cap(slots)+1 tried): each further one waits, and is given up after
// 20 ms.
func canSend(t *testing.T, g *bucketGate) int {
	t.Helper()
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for range cap(g.slots) + 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		release, _, err := g.acquire(ctx)
		cancel()
		if err != nil {
			break
		}
		releases = append(releases, release)
	}
	return len(releases)
}

// rowLimit returns the in-flight limit gates.Throttling reports for
// bucket, what deltasync_storage_in_flight_limit exports.
func rowLimit(t *testing.T, gates *StorageGates, bucket string) int {
	t.Helper()
	for _, r := range gates.Throttling() {
		if r.Bucket == bucket {
			return r.InFlightLimit
		}
	}
	t.Fatalf("Throttling() has no row for %s", bucket)
	return 0
}

func backoffOf(g *bucketGate) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.backoff
}

// TestThrottledWindowEscalatesOnce: 64 requests in flight answered
// SlowDown together raise the bucket's backoff one step (throttleBase),
// not 64 doublings to its cap as they did; the requests sent after that
// escalation, throttled in turn, raise it one more step each window;
// successes halve it back to 0. Every answer is counted.
func TestThrottledWindowEscalatesOnce(t *testing.T) {
	shortBackoff(t)
	gates := newGates(t, StorageLimits{})
	g := gates.gate("s3://hot")

	sendWindow(t, g, DefaultMaxInFlightPerBucket, true)
	if b := backoffOf(g); b != throttleBase {
		t.Fatalf("after %d throttled answers to one window: backoff %v, want one step (%v), not the cap %v",
			DefaultMaxInFlightPerBucket, b, throttleBase, throttleMax)
	}
	if r := gates.Throttling()[0]; r.Throttled != DefaultMaxInFlightPerBucket || r.Backoff != throttleBase {
		t.Errorf("Throttling() = %+v, want %d throttled, backoff %v", r, DefaultMaxInFlightPerBucket, throttleBase)
	}

	// The next windows, sent after each escalation (acquire waits out the
	// hold), escalate once each.
	for i, want := range []time.Duration{2 * throttleBase, 4 * throttleBase, 8 * throttleBase} {
		ws := sendWindow(t, g, 8, true)
		if ws[0] != uint64(i+1) {
			t.Errorf("window %d: requests sent in window %d", i+2, ws[0])
		}
		if b := backoffOf(g); b != want {
			t.Errorf("after window %d of throttled answers: backoff %v, want %v", i+2, b, want)
		}
	}

	// Successes halve it: 8 → 4 → 2 → 1 → 0.5 ms, then below half a step, 0.
	for _, want := range []time.Duration{4 * throttleBase, 2 * throttleBase, throttleBase, throttleBase / 2, 0} {
		sendWindow(t, g, 1, false)
		if b := backoffOf(g); b != want {
			t.Errorf("after a success: backoff %v, want %v", b, want)
		}
	}
	if r := gates.Throttling()[0]; r.Throttled != DefaultMaxInFlightPerBucket+3*8 || r.Backoff != 0 {
		t.Errorf("Throttling() = %+v, want %d throttled, backoff 0", r, DefaultMaxInFlightPerBucket+3*8)
	}
}

// TestLateThrottleKeepsRetryAfter: a throttled answer to a request sent
// before the latest escalation does not escalate again, but its
// Retry-After still holds the bucket.
func TestLateThrottleKeepsRetryAfter(t *testing.T) {
	shortBackoff(t)
	g := newGates(t, StorageLimits{}).gate("s3://hot")
	g.record(true, 0, 0) // opens window 1
	start := time.Now()
	g.record(true, 300*time.Millisecond, 0)
	g.mu.Lock()
	backoff, held := g.backoff, g.notBefore.Sub(start)
	g.mu.Unlock()
	if backoff != throttleBase {
		t.Errorf("backoff %v after a late throttle, want %v (no second escalation)", backoff, throttleBase)
	}
	if held < 300*time.Millisecond {
		t.Errorf("held for %v after a Retry-After of 300 ms, want at least that", held)
	}
}

// TestHoldBegunWhileQueuedIsWaited: a request that got its bucket slot
// while a hold began does not go out during the hold.
func TestHoldBegunWhileQueuedIsWaited(t *testing.T) {
	shortBackoff(t)
	g := newGates(t, StorageLimits{MaxInFlightPerBucket: 1}).gate("s3://hot")
	release, w, err := g.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time)
	go func() {
		release, _, err := g.acquire(context.Background()) // queued behind the one slot
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		release()
	}()
	time.Sleep(10 * time.Millisecond)       // let it queue for the slot
	g.record(true, 200*time.Millisecond, w) // the answer holds the bucket, then frees the slot (as do does)
	release()
	g.mu.Lock()
	notBefore := g.notBefore
	g.mu.Unlock()
	if sent := <-got; sent.Before(notBefore) {
		t.Errorf("queued request sent %v before the hold ended", notBefore.Sub(sent))
	}
}

// TestThrottledWindowHalvesLimit: a window of throttled answers after
// some success halves the requests the bucket may have in flight (64 →
// 32 → 16), a limit the gate keeps; a window in which nothing succeeded
// (the store refusing every request) leaves it and only the backoff
// grows; it never goes below 1. Throttling's row reports the limit
// throughout.
func TestThrottledWindowHalvesLimit(t *testing.T) {
	shortBackoff(t)
	gates := newGates(t, StorageLimits{})
	g := gates.gate("s3://hot")
	if r, n := rowLimit(t, gates, "s3://hot"), canSend(t, g); r != DefaultMaxInFlightPerBucket || n != DefaultMaxInFlightPerBucket {
		t.Fatalf("unthrottled bucket: row's limit %d, %d requests in flight at once; want %d", r, n, DefaultMaxInFlightPerBucket)
	}
	sendWindow(t, g, 1, false)
	sendWindow(t, g, DefaultMaxInFlightPerBucket, true)
	if l, r, n := limitOf(g), rowLimit(t, gates, "s3://hot"), canSend(t, g); l != 32 || r != 32 || n != 32 {
		t.Errorf("after a window of throttles: limit %d, row's %d, %d in flight at once; want 32", l, r, n)
	}
	sendWindow(t, g, 1, false)
	sendWindow(t, g, 32, true)
	if l, r, n := limitOf(g), rowLimit(t, gates, "s3://hot"), canSend(t, g); l != 16 || r != 16 || n != 16 {
		t.Errorf("after a second window: limit %d, row's %d, %d in flight at once; want 16", l, r, n)
	}
	// Nothing succeeds: the limit stays, the backoff doubles.
	before := backoffOf(g)
	sendWindow(t, g, 16, true)
	if l, r, b := limitOf(g), rowLimit(t, gates, "s3://hot"), backoffOf(g); l != 16 || r != 16 || b != 2*before {
		t.Errorf("after a window refused whole: limit %d, row's %d, backoff %v; want 16, 16, %v", l, r, b, 2*before)
	}
	for range 10 {
		sendWindow(t, g, 1, false)
		sendWindow(t, g, 1, true)
	}
	if l, r, n := limitOf(g), rowLimit(t, gates, "s3://hot"), canSend(t, g); l != 1 || r != 1 || n != 1 {
		t.Errorf("after many windows: limit %d, row's %d, %d in flight at once; want 1", l, r, n)
	}
}

// TestSuccessesRaiseLimit: from a limit of L, each L successes raise it by
// one, back to max_in_flight_per_bucket and never above it, as
// Throttling's row reports.
func TestSuccessesRaiseLimit(t *testing.T) {
	shortBackoff(t)
	gates := newGates(t, StorageLimits{MaxInFlightPerBucket: 8})
	g := gates.gate("s3://hot")
	sendWindow(t, g, 1, false)
	sendWindow(t, g, 8, true)
	sendWindow(t, g, 1, false)
	sendWindow(t, g, 4, true)
	if l, r := limitOf(g), rowLimit(t, gates, "s3://hot"); l != 2 || r != 2 {
		t.Fatalf("limit %d, row's %d after two windows of throttles, want 2", l, r)
	}
	sendWindow(t, g, 1, false) // the success of the last window's check
	for _, want := range []int{3, 4, 5, 6, 7, 8} {
		sendWindow(t, g, want-1, false)
		if l, r, n := limitOf(g), rowLimit(t, gates, "s3://hot"), canSend(t, g); l != want || r != want || n != want {
			t.Errorf("limit %d, row's %d, %d in flight at once; want %d", l, r, n, want)
		}
	}
	for range 100 {
		sendWindow(t, g, 1, false)
	}
	if l, r, n := limitOf(g), rowLimit(t, gates, "s3://hot"), canSend(t, g); l != 8 || r != 8 || n != 8 {
		t.Errorf("after 100 more successes: limit %d, row's %d, %d in flight at once; want 8 (max_in_flight_per_bucket)", l, r, n)
	}
}

// TestSharedRowTakesSmallerLimit: two gates of one bucket name (the same
// S3 bucket name on two endpoints) share Throttling's row, and it reports
// the more throttled gate's in-flight limit, whichever gate it reads
// first.
func TestSharedRowTakesSmallerLimit(t *testing.T) {
	shortBackoff(t)
	gates := newGates(t, StorageLimits{})
	a, b := gates.gate("s3://lake?endpoint=http://a:9000"), gates.gate("s3://lake?endpoint=http://b:9000")
	sendWindow(t, b, 1, false)
	sendWindow(t, b, 4, true)
	if l := limitOf(b); l != DefaultMaxInFlightPerBucket/2 {
		t.Fatalf("throttled gate's limit %d, want %d", l, DefaultMaxInFlightPerBucket/2)
	}
	for range 20 { // the gates map's order varies from call to call
		rows := gates.Throttling()
		if len(rows) != 1 || rows[0].Bucket != "s3://lake" {
			t.Fatalf("Throttling() = %+v, want one row for s3://lake", rows)
		}
		if r := rows[0]; r.InFlightLimit != limitOf(b) || r.Throttled != 4 {
			t.Fatalf("shared row %+v, want the throttled gate's limit %d (not the other's %d), 4 throttled",
				r, limitOf(b), limitOf(a))
		}
	}
}
