package notify

import (
	"context"
	"errors"
	"math/rand/v2"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/sync"
)

// Sink is where change events go: OpenLineage, a pubsub topic, a webhook.
type Sink interface {
	// Name is the sink's label in metrics and logs; it holds no secret.
	Name() string
	// Deliver sends one event; ctx bounds the attempt. An error marked
	// Permanent is not retried.
	Deliver(ctx context.Context, e Event) error
}

// permanent is an error a resend would get again (a 4xx).
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one resending would not fix.
func Permanent(err error) error { return permanent{err} }

// IsPermanent reports whether err is marked Permanent.
func IsPermanent(err error) bool { return errors.As(err, new(permanent)) }

// Options configure a Dispatcher. Zero values take the defaults.
type Options struct {
	// Instance names this deltasync in every event (default "deltasync").
	Instance string
	// QueueSize bounds each sink's queue (default 1000): when it is full,
	// new events to that sink are dropped and counted.
	QueueSize int
	// MaxAttempts bounds the deliveries of one event (default 10).
	MaxAttempts int
	// Backoff is the first retry's delay, doubled up to MaxBackoff, each
	// jittered to between half and all of it (defaults 1s, 1m).
	Backoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one delivery (default 10s).
	AttemptTimeout time.Duration
	Metrics        *Metrics
	Logger         *zap.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Instance == "" {
		o.Instance = "deltasync"
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1000
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff < o.Backoff {
		o.MaxBackoff = max(time.Minute, o.Backoff)
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Dispatcher is a sync.Notifier: it turns outcomes into events and queues
// each for every sink, never blocking the reconcile that reports it. Each
// sink has its own bounded queue and worker, so a slow sink delays only
// its own events.
type Dispatcher struct {
	opts   Options
	queues []*queue
	stop   context.CancelFunc // ends retries' waits and attempts at once
	ctx    context.Context

	mu     stdsync.Mutex
	closed bool
	// last is the last event ID queued per table: a flagged table reported
	// again every cycle, unchanged, is one event, not one a cycle.
	last map[string]string
	wg   stdsync.WaitGroup
}

type queue struct {
	sink Sink
	ch   chan Event
}

// New starts a Dispatcher delivering to sinks. Close it to stop.
func New(opts Options, sinks ...Sink) *Dispatcher {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{opts: opts, stop: cancel, ctx: ctx, last: map[string]string{}}
	for _, s := range sinks {
		q := &queue{sink: s, ch: make(chan Event, opts.QueueSize)}
		opts.Metrics.init(s.Name())
		d.queues = append(d.queues, q)
		d.wg.Add(1)
		go d.work(q)
	}
	return d
}

// Notify queues n's change event, if it is one, for every sink.
func (d *Dispatcher) Notify(n sync.Notice) {
	e, ok := FromNotice(n, d.opts.Instance, d.opts.Now())
	if !ok {
		return
	}
	d.Send(e)
}

// Send queues e for every sink, unless it repeats the last event queued
// for its table (same ID). A full queue drops e for its sink and counts it.
func (d *Dispatcher) Send(e Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.last[e.Table] == e.ID {
		return
	}
	d.last[e.Table] = e.ID
	for _, q := range d.queues {
		select {
		case q.ch <- e:
			d.opts.Metrics.setDepth(q.sink.Name(), len(q.ch))
		default:
			d.opts.Metrics.drop(q.sink.Name(), DropQueueFull, 1)
			d.opts.Logger.Warn("notification dropped: queue full", zap.String("sink", q.sink.Name()),
				zap.String("table", e.Table), zap.String("event", string(e.Kind)), zap.String("id", e.ID))
		}
	}
}

// work delivers q's events in order, each retried with backoff.
func (d *Dispatcher) work(q *queue) {
	defer d.wg.Done()
	for e := range q.ch {
		d.opts.Metrics.setDepth(q.sink.Name(), len(q.ch))
		d.deliver(q.sink, e)
	}
}

// deliver tries e on s up to MaxAttempts times, waiting a jittered
// exponential backoff between attempts, and counts the outcome.
func (d *Dispatcher) deliver(s Sink, e Event) {
	name := s.Name()
	log := d.opts.Logger.With(zap.String("sink", name), zap.String("table", e.Table), zap.String("id", e.ID))
	for attempt := 1; ; attempt++ {
		if d.ctx.Err() != nil {
			d.opts.Metrics.drop(name, DropShutdown, 1)
			return
		}
		ctx, cancel := context.WithTimeout(d.ctx, d.opts.AttemptTimeout)
		err := s.Deliver(ctx, e)
		cancel()
		if err == nil {
			d.opts.Metrics.deliver(name)
			return
		}
		d.opts.Metrics.fail(name)
		switch {
		case errors.Is(err, errEncode):
			d.opts.Metrics.drop(name, DropEncode, 1)
			log.Error("notification dropped: cannot encode", zap.Error(err))
			return
		case IsPermanent(err):
			d.opts.Metrics.drop(name, DropRejected, 1)
			log.Error("notification dropped: sink rejected it", zap.Error(err))
			return
		case attempt >= d.opts.MaxAttempts:
			d.opts.Metrics.drop(name, DropRetries, 1)
			log.Error("notification dropped: every attempt failed", zap.Int("attempts", attempt), zap.Error(err))
			return
		}
		log.Warn("notification failed, retrying", zap.Int("attempt", attempt), zap.Error(err))
		select {
		case <-time.After(d.backoff(attempt)):
		case <-d.ctx.Done():
		}
	}
}

// backoff is the wait after the attempt-th failure: a random wait
// between half and all of an exponential ceiling (so that sinks retried
// together spread out).
func (d *Dispatcher) backoff(attempt int) time.Duration {
	ceil := d.opts.Backoff << min(attempt-1, 30)
	if ceil <= 0 || ceil > d.opts.MaxBackoff {
		ceil = d.opts.MaxBackoff
	}
	return ceil/2 + rand.N(ceil/2+1)
}

// Close stops taking events and drains the queues until ctx is done; then
// it abandons the attempt in flight and counts what is left as dropped
// (shutdown). It returns ctx's error when the drain was cut short.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	for _, q := range d.queues {
		close(q.ch)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		d.stop()
		return nil
	case <-ctx.Done():
	}
	d.stop() // the workers now count what they hold as dropped
	<-done
	for _, q := range d.queues {
		d.opts.Metrics.setDepth(q.sink.Name(), 0)
	}
	return ctx.Err()
}

var _ sync.Notifier = (*Dispatcher)(nil)
