package deltalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"
)

// On an object store every request is a round trip (10-30 ms in-region),
// so how many are in flight, not the CPU, decides how many tables a
// process reads in a minute. That number is its own setting here, apart
// from how many tables the caller reads at once: a process-wide limit and
// one per bucket (an S3 or GCS bucket, an Azure account's container),
// shared by every table of that bucket through its bucketGate (StorageGates). The per-bucket
// gate also carries the bucket's throttling: an S3 503 SlowDown, a GCS 429
// or an Azure 503 ServerBusy makes every request of that bucket, and only
// of that bucket, wait a shared backoff (with jitter, at least the answer's
// Retry-After) before it is sent again.
//
// Local and mem:// tables are not limited: their requests cost no round
// trip, and the caller's concurrency already bounds them.

// Default storage limits. Per bucket: twice a single Load's prefetchMax,
// so one Load never waits behind its own bucket's limit, and at 20 ms per
// request a floor of 3.1 s per 10,000 unchanged tables of one bucket;
// BenchmarkSteadyRefreshS3 (1,000 tables) measured 1.8 s at 16, 0.6-0.9 s
// at 64 and 0.74 s at 128, CPU-bound beyond. Per process: four buckets'
// worth, within the transports' idle connections.
const (
	DefaultMaxInFlight          = 256
	DefaultMaxInFlightPerBucket = 64
)

// StorageLimits bound the object-store requests in flight.
type StorageLimits struct {
	// MaxInFlight bounds the requests in flight in the process, over all
	// buckets. 0 means DefaultMaxInFlight.
	MaxInFlight int
	// MaxInFlightPerBucket bounds the requests in flight to one bucket
	// (one S3 or GCS bucket, one Azure storage account and container).
	// 0 means DefaultMaxInFlightPerBucket; it is capped at MaxInFlight.
	MaxInFlightPerBucket int
}

func (l StorageLimits) withDefaults() StorageLimits {
	if l.MaxInFlight == 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxInFlightPerBucket == 0 {
		l.MaxInFlightPerBucket = DefaultMaxInFlightPerBucket
	}
	l.MaxInFlightPerBucket = min(l.MaxInFlightPerBucket, l.MaxInFlight)
	return l
}

// StorageGates are the in-flight limits and the per-bucket throttling
// state a process's tables share: one for the process, given to every
// Open by WithStorageGates (cmd makes it at start-up). Tables opened
// without it share defaultGates, which has the default limits.
type StorageGates struct {
	limits   StorageLimits
	process  chan struct{} // the process's requests in flight
	inFlight atomic.Int64

	mu    stdsync.Mutex
	gates map[string]*bucketGate
}

// NewStorageGates returns gates with the limits l. A negative limit is an
// error.
func NewStorageGates(l StorageLimits) (*StorageGates, error) {
	if l.MaxInFlight < 0 || l.MaxInFlightPerBucket < 0 {
		return nil, fmt.Errorf("storage limits must not be negative (max_in_flight %d, max_in_flight_per_bucket %d)",
			l.MaxInFlight, l.MaxInFlightPerBucket)
	}
	l = l.withDefaults()
	return &StorageGates{limits: l, process: make(chan struct{}, l.MaxInFlight), gates: map[string]*bucketGate{}}, nil
}

// InFlight returns the object-store requests in flight now through the
// gates (for metrics and benchmarks).
func (s *StorageGates) InFlight() int64 { return s.inFlight.Load() }

// defaultGates are the gates of tables opened without WithStorageGates.
var defaultGates, _ = NewStorageGates(StorageLimits{})

// gate returns the shared gate of the bucket key ("s3://bucket",
// "gs://bucket", "azblob://account/container").
func (s *StorageGates) gate(key string) *bucketGate {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[key]
	if g == nil {
		g = &bucketGate{name: bucketName(key), slots: make(chan struct{}, s.limits.MaxInFlightPerBucket), process: s.process, inFlight: &s.inFlight,
			limit: s.limits.MaxInFlightPerBucket}
		s.gates[key] = g
	}
	return g
}

// bucketName is the bucket of a gate key as metrics name it: the
// scheme and bucket ("s3://name", "gs://name") or the Azure account and
// container ("azblob://account/container"), without the endpoint or the
// domain a key may carry.
func bucketName(key string) string {
	scheme, rest, _ := strings.Cut(key, "://")
	switch scheme {
	case "s3":
		rest, _, _ = strings.Cut(rest, "?")
	case "azblob":
		hostPart, container, _ := strings.Cut(rest, "/")
		account, _, _ := strings.Cut(hostPart, ".")
		rest = account + "/" + container
	}
	return scheme + "://" + rest
}

// BucketThrottling is what one bucket's gate has seen of the store
// throttling it (StorageGates.Throttling).
type BucketThrottling struct {
	// Bucket is "s3://name", "gs://name" or "azblob://account/container".
	Bucket string
	// Throttled counts the throttling answers (S3 503 SlowDown, GCS 429
	// or 503, Azure 503, 429 or 500 OperationTimedOut) the bucket's
	// requests got, each retried after the shared backoff or returned.
	Throttled int64
	// Failed counts the requests that ran out of retries and failed with
	// ErrThrottled.
	Failed int64
	// Backoff is the bucket's shared backoff now: the most a throttling
	// answer makes its requests wait next (doubled by the first of each
	// window of throttled requests, halved by each success); 0 when the
	// bucket is not throttled.
	Backoff time.Duration
	// Held is how long from now no request of the bucket is sent (the
	// backoff drawn, or a Retry-After); 0 when none is held.
	Held time.Duration
	// InFlightLimit is how many requests the bucket may have in flight
	// now: max_in_flight_per_bucket until the store throttles it, halved
	// by each throttled window that followed a success, raised by one per
	// limit's worth of successes. Two gates sharing the row give the
	// smaller (the more throttled one's).
	InFlightLimit int
}

// Throttling returns, by bucket name in order, what the gates have seen
// of throttling: one row for each bucket a table was opened on since the
// gates were made, throttled or not. Two gates of one bucket name (one
// S3 bucket name on two endpoints) share a row: counts summed, the
// longer backoff and hold, the smaller in-flight limit.
func (s *StorageGates) Throttling() []BucketThrottling {
	s.mu.Lock()
	gates := make([]*bucketGate, 0, len(s.gates))
	for _, g := range s.gates {
		gates = append(gates, g)
	}
	s.mu.Unlock()
	now := time.Now()
	rows := map[string]*BucketThrottling{}
	for _, g := range gates {
		r := rows[g.name]
		g.mu.Lock()
		if r == nil {
			r = &BucketThrottling{Bucket: g.name, InFlightLimit: g.limit}
			rows[g.name] = r
		}
		r.InFlightLimit = min(r.InFlightLimit, g.limit)
		r.Throttled += g.throttled
		r.Failed += g.failed
		r.Backoff = max(r.Backoff, g.backoff)
		r.Held = max(r.Held, g.notBefore.Sub(now))
		g.mu.Unlock()
	}
	out := make([]BucketThrottling, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b BucketThrottling) int { return strings.Compare(a.Bucket, b.Bucket) })
	return out
}

// Backoff of a throttled bucket: the first throttle holds the bucket for
// up to throttleBase (with full jitter), each further window of throttles
// doubles it up to throttleMax; every success halves it. A window is the
// requests sent between two such escalations: all the answers to requests
// sent before the latest one are news of the rate that caused it, so they
// do not escalate again (as TCP reduces once per round trip), or 64
// requests in flight answered SlowDown together would take the backoff to
// its cap at once. A request is sent again at most throttleRetries times
// for throttling before its error is returned.
//
// The escalation that opens a window also halves the requests the bucket
// may have in flight (its limit, never below 1) if any request succeeded
// since the previous one: the store lets some through, so fewer at once
// is the rate it allows. Each limit's worth of successes raises the limit
// by one, up to max_in_flight_per_bucket (as TCP's congestion window).
// A store refusing every request keeps the limit; only the backoff grows.
//
// Variables so tests can shorten them.
var (
	throttleBase    = 100 * time.Millisecond
	throttleMax     = 10 * time.Second
	throttleRetries = 8
)

// bucketGate is the limit and the throttling state one bucket's tables share.
type bucketGate struct {
	name     string        // the bucket as metrics name it (bucketName)
	slots    chan struct{} // per-bucket requests in flight, and the parked slots
	process  chan struct{} // the process's (StorageGates.process)
	inFlight *atomic.Int64 // the process's count (StorageGates.inFlight)

	mu        stdsync.Mutex
	backoff   time.Duration // current shared backoff; 0 when not throttled
	notBefore time.Time     // no request of the bucket is sent before it
	window    uint64        // escalations so far; a request carries the one it was sent in
	limit     int           // requests in flight allowed now, 1 to cap(slots)
	parked    int           // slots the gate holds so that only limit are free: up to cap(slots)-limit
	succeeded int           // successes since the limit last rose
	since     int           // successes since the last escalation
	throttled int64         // throttled answers seen (tests, metrics)
	failed    int64         // requests failed as ErrThrottled (metrics)
}

// acquire waits for the bucket's backoff to pass, then for a slot of the
// bucket and one of the process (in that order, so a busy bucket holds no
// process slot while it waits for its own), and returns their release and
// the window the request is sent in. A hold that began while it waited for
// its slot is waited out too: the slot goes back and it queues again.
func (g *bucketGate) acquire(ctx context.Context) (func(), uint64, error) {
	for {
		if err := g.waitHold(ctx); err != nil {
			return nil, 0, err
		}
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		g.mu.Lock()
		held, window := time.Now().Before(g.notBefore), g.window
		g.mu.Unlock()
		if held {
			g.freeSlot()
			continue
		}
		select {
		case g.process <- struct{}{}:
		case <-ctx.Done():
			g.freeSlot()
			return nil, 0, ctx.Err()
		}
		g.inFlight.Add(1)
		return func() {
			g.inFlight.Add(-1)
			<-g.process
			g.freeSlot()
		}, window, nil
	}
}

// freeSlot gives back a bucket slot, or parks it while fewer than the
// limit allows are parked.
func (g *bucketGate) freeSlot() {
	g.mu.Lock()
	park := g.parked < cap(g.slots)-g.limit
	if park {
		g.parked++
	}
	g.mu.Unlock()
	if !park {
		<-g.slots
	}
}

// waitHold returns once the bucket is not held.
func (g *bucketGate) waitHold(ctx context.Context) error {
	for {
		g.mu.Lock()
		wait := time.Until(g.notBefore)
		g.mu.Unlock()
		if wait <= 0 {
			return nil
		}
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C:
		}
	}
}

// record updates the bucket's backoff with the outcome of one request
// sent in window sent: the first throttled answer of a window (retryAfter
// is its Retry-After, 0 if none) escalates the backoff, opens the next
// window and holds the bucket's requests; a later one of the same window
// only holds them for its Retry-After; any other outcome eases the
// backoff.
func (g *bucketGate) record(throttled bool, retryAfter time.Duration, sent uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !throttled {
		if g.backoff > 0 {
			g.backoff /= 2
			if g.backoff < throttleBase/2 {
				g.backoff = 0
			}
		}
		g.since++
		if g.limit < cap(g.slots) {
			if g.succeeded++; g.succeeded >= g.limit {
				g.limit, g.succeeded = g.limit+1, 0
				if g.parked > cap(g.slots)-g.limit {
					g.parked--
					<-g.slots // never blocks: the parked slot is in the channel
				}
			}
		}
		return
	}
	g.throttled++
	wait := min(retryAfter, throttleMax)
	if sent == g.window {
		g.window++
		if g.since > 0 {
			g.limit, g.succeeded, g.since = max(1, g.limit/2), 0, 0
		}
		g.backoff = min(max(2*g.backoff, throttleBase), throttleMax)
		wait = max(wait, time.Duration(rand.Int64N(int64(g.backoff))+1))
	}
	if until := time.Now().Add(wait); until.After(g.notBefore) {
		g.notBefore = until
	}
}

// throttledCount returns how many throttled answers the gate has seen.
func (g *bucketGate) throttledCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.throttled
}

// ErrThrottled marks a storage error the store answered because the
// bucket was throttled (S3 SlowDown, GCS 429, Azure ServerBusy) after the
// shared backoff's retries ran out.
var ErrThrottled = errors.New("storage throttled the bucket")

// throttleClassifiers recognise one driver's throttling answers and their
// Retry-After; each driver file adds its own from init.
var throttleClassifiers []func(error) (retryAfter time.Duration, ok bool)

// throttleOf reports whether err is a throttling answer, and its Retry-After.
func throttleOf(err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	for _, c := range throttleClassifiers {
		if d, ok := c(err); ok {
			return d, true
		}
	}
	return 0, false
}

// do runs one storage request f under the gate: within the process's and
// the bucket's in-flight limits, after the bucket's shared backoff, sent
// again while the store answers that the bucket is throttled (at most
// throttleRetries times). Without a gate (local and mem:// tables, tables
// made with NewTable) f runs directly.
func (g *bucketGate) do(ctx context.Context, f func() error) error {
	if g == nil {
		return f()
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		release, window, err := g.acquire(ctx)
		if err != nil {
			return err
		}
		growStack(attempt)
		err = f()
		retryAfter, throttled := throttleOf(err)
		g.record(throttled, retryAfter, window) // before the slot frees, so a request queued for it sees the hold
		release()
		if !throttled || ctx.Err() != nil {
			return err
		}
		if attempt >= throttleRetries {
			g.mu.Lock()
			g.failed++
			g.mu.Unlock()
			return fmt.Errorf("%w (%d attempts in %s, each after the bucket's shared backoff): %w",
				ErrThrottled, attempt+1, time.Since(start).Round(time.Millisecond), err)
		}
	}
}

// parseRetryAfter reads a Retry-After header given in seconds (the form
// object stores use); anything else is 0.
func parseRetryAfter(v string) time.Duration {
	var secs int
	if _, err := fmt.Sscanf(v, "%d", &secs); err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}
