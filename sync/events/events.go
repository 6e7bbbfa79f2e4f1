package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	stdsync "sync"
	"time"

	"go.uber.org/zap"
	"gocloud.dev/pubsub"

	"github.com/deltasync/deltasync/sync"
)

// Source is one subscription of storage notifications. Open is called
// again, with backoff, whenever the subscription fails.
type Source struct {
	// Name identifies the subscription in logs, metrics and /readyz; it must
	// not carry secrets (use a redacted URL).
	Name string
	// Open opens the subscription; release (may be nil) frees what it
	// holds (a broker connection) after the subscription is shut down.
	Open func(ctx context.Context) (sub *pubsub.Subscription, release func(), err error)
}

// Options configures event-driven sync.
type Options struct {
	Sources []Source
	// Debounce is how long a table waits after its first event for more,
	// so a burst of commits costs one reconcile (default 250ms).
	Debounce time.Duration
	// QueueSize bounds the tables waiting for a reconcile; while it is
	// full no more messages are received (default 1024).
	QueueSize int
	// Concurrency bounds the reconciles run for events and by cron cycles
	// together (the same slots; default the reconciler's full reads at
	// their default, sync.ResolveReadConcurrency(0, 0)).
	Concurrency int
	// ResyncInterval is the longest a cron cycle may go without reading a
	// table's log in full (the daemon passes its resync_interval). 0: cycles
	// never skip a read.
	ResyncInterval time.Duration
	// MaxWait is how long an event is held while its commit is not yet
	// visible in the log (or its table's reconcile fails) before it is
	// returned to the broker (default 2m).
	MaxWait time.Duration
	// Retry spaces out reconciles of a table whose event's commit was not
	// seen yet: Initial doubling up to Max (default 250ms .. 15s).
	Retry sync.Backoff
	// Reconnect spaces out attempts to reopen a failed subscription
	// (default 1s .. 1m).
	Reconnect sync.Backoff
	Metrics   *Metrics
	Logger    *zap.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Events turns storage notifications into reconciles of the tables they
// name, and marks them in its sync.Dirty, which tells cron cycles which
// tables' logs need no LIST. Create it with New, pass its Dirty in
// sync.Options.Dirty, and Run it beside the cron loop.
type Events struct {
	opts  Options
	log   *zap.Logger
	dirty *sync.Dirty

	mu      stdsync.Mutex
	subs    map[string]*subState
	pending map[string]*pendingTable
	wake    chan struct{} // the scheduler has something to look at
	space   chan struct{} // the queue has room again
	r       Reconciler
}

// Reconciler is what Events needs of the reconciler (a *sync.Reconciler):
// to reconcile a table, and whether it tracks one and when a failing one
// may be tried again.
type Reconciler interface {
	Reconcile(ctx context.Context, t sync.Target) sync.Result
	Tracked(name string) (nextAttempt time.Time, ok bool)
}

// Registrar is what Events needs of a reconciler to register tables from
// their events (a *sync.Reconciler; optional): whether an event's table
// root lies under a register rule's template, unknown so far, and to decide
// and act for it as discovery would.
type Registrar interface {
	RegisterCandidate(root string) (name string, ok bool)
	RegisterAt(ctx context.Context, root string) (res sync.Result, ok bool)
}

type subState struct {
	up  bool
	err error
}

// pendingTable collects the events of one table until a reconcile has seen
// them.
type pendingTable struct {
	due      time.Time
	first    time.Time // first event of the batch (MaxWait runs from here)
	want     int64     // highest commit version announced; -1: none
	acks     []*ackRef
	times    []time.Time // event times, for the lag histogram
	running  bool
	attempts int
	// register is the table root of a table to register (Registrar);
	// the entry's key is registerKey(register) and name the table it
	// would be registered as.
	register string
	name     string
}

// registerKey is the queue key of a table root to register: a name no
// table has (names have no space before their dots).
func registerKey(root string) string { return "register " + root }

// ackRef acknowledges a message once every table it named has been handled.
type ackRef struct {
	m    *pubsub.Message
	left int
	nack bool
}

// New checks opts and returns an Events.
func New(opts Options) (*Events, error) {
	if len(opts.Sources) == 0 {
		return nil, errors.New("events: Options.Sources is empty")
	}
	for _, s := range opts.Sources {
		if s.Open == nil || s.Name == "" {
			return nil, errors.New("events: every Source needs a Name and Open")
		}
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 250 * time.Millisecond
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.Concurrency <= 0 {
		// The slots are the reconciler's full reads too: a default of its
		// own here capped them below read_concurrency's.
		opts.Concurrency = sync.ResolveReadConcurrency(0, 0)
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 2 * time.Minute
	}
	if opts.Retry.Initial <= 0 {
		opts.Retry = sync.Backoff{Initial: 250 * time.Millisecond, Max: 15 * time.Second}
	}
	if opts.Reconnect.Initial <= 0 {
		opts.Reconnect = sync.Backoff{Initial: time.Second, Max: time.Minute}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := opts.Logger
	if l == nil {
		l = zap.NewNop()
	}
	e := &Events{
		opts: opts, log: l.With(zap.String("component", "events")),
		dirty: sync.NewDirty(sync.DirtyOptions{Concurrency: opts.Concurrency, ResyncInterval: opts.ResyncInterval,
			Skipped: opts.Metrics.skippedRead, Now: opts.Now}),
		subs:    map[string]*subState{},
		pending: map[string]*pendingTable{}, wake: make(chan struct{}, 1), space: make(chan struct{}, 1),
	}
	for _, s := range opts.Sources {
		e.subs[s.Name] = &subState{err: errors.New("not opened yet")}
		e.dirty.SourceUp(s.Name, false)
		opts.Metrics.subscription(s.Name, false, false)
	}
	return e, nil
}

// Dirty is the set of tables Events marks; pass it in sync.Options.Dirty
// of the Reconciler given to Run. A nil *Events has none.
func (e *Events) Dirty() *sync.Dirty {
	if e == nil {
		return nil
	}
	return e.dirty
}

// Ready returns nil when every subscription is open, else which are not.
func (e *Events) Ready() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, s := range e.opts.Sources {
		if st := e.subs[s.Name]; !st.up {
			errs = append(errs, fmt.Errorf("event subscription %s: %v", s.Name, st.err))
		}
	}
	return errors.Join(errs...)
}

// Run listens to every source and reconciles the tables their events name
// with r, until ctx is done. Messages are acknowledged only after their
// tables' reconciles have seen the announced commit.
func (e *Events) Run(ctx context.Context, r Reconciler) error {
	if !e.dirty.Attached() {
		return errors.New("events: Run needs the Reconciler created with sync.Options.Dirty set to Events.Dirty()")
	}
	e.mu.Lock()
	e.r = r
	e.mu.Unlock()
	var wg stdsync.WaitGroup
	work := make(chan string)
	for range e.opts.Concurrency {
		wg.Go(func() {
			for name := range work {
				e.process(ctx, r, name)
			}
		})
	}
	for _, s := range e.opts.Sources {
		wg.Go(func() { e.listen(ctx, s) })
	}
	e.schedule(ctx, work)
	close(work)
	wg.Wait()
	return nil
}

// listen keeps one subscription open and hands its messages to handle.
func (e *Events) listen(ctx context.Context, src Source) {
	failures := 0
	for ctx.Err() == nil {
		sub, release, err := src.Open(ctx)
		if err == nil {
			e.setSub(src.Name, true, nil)
			err = e.receive(ctx, src.Name, sub)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = sub.Shutdown(sctx)
			cancel()
			if release != nil {
				release()
			}
			failures = 0
		}
		if ctx.Err() != nil {
			return
		}
		failures++
		e.setSub(src.Name, false, err)
		e.log.Warn("event subscription failed; reconnecting", zap.String("subscription", src.Name),
			zap.Error(err), zap.Int("failures", failures))
		t := time.NewTimer(e.opts.Reconnect.Delay(failures))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// receive pulls messages until the subscription fails or ctx is done. It
// stops pulling while the queue of pending tables is full.
func (e *Events) receive(ctx context.Context, name string, sub *pubsub.Subscription) error {
	for {
		if err := e.waitForSpace(ctx); err != nil {
			return err
		}
		m, err := sub.Receive(ctx)
		if err != nil {
			return err
		}
		e.handle(name, m)
	}
}

func (e *Events) waitForSpace(ctx context.Context) error {
	for {
		e.mu.Lock()
		full := len(e.pending) >= e.opts.QueueSize
		e.mu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.space:
		}
	}
}

func (e *Events) setSub(name string, up bool, err error) {
	e.mu.Lock()
	st := e.subs[name]
	st.up, st.err = up, err
	// Events may have been missed while it was down: no log read from
	// before it came back may be trusted to be current.
	e.dirty.SourceUp(name, up)
	e.mu.Unlock()
	e.opts.Metrics.subscription(name, up, !up && err != nil)
}

// handle decodes one message and queues the tables it names; messages that
// name no table are acknowledged at once.
func (e *Events) handle(sub string, m *pubsub.Message) {
	e.opts.Metrics.receivedFrom(sub)
	evs, err := ParseNotification(m.Body, m.Metadata)
	if err != nil {
		e.opts.Metrics.poisonMessage()
		body := m.Body
		if len(body) > 512 {
			body = body[:512]
		}
		e.log.Warn("poison message acknowledged and dropped", zap.String("subscription", sub),
			zap.String("message_id", fmt.Sprint(m.LoggableID)), zap.Error(err), zap.ByteString("body", body))
		m.Ack()
		return
	}
	if len(evs) == 0 {
		e.opts.Metrics.unmatchedEvent(UnmatchedNoObject)
		m.Ack()
		return
	}
	now := e.opts.Now()
	want := map[string]int64{}
	times := map[string][]time.Time{}
	registers := map[string]string{} // queue key -> name to register as
	for _, ev := range evs {
		reason, tables, o := e.match(ev)
		if reason == UnmatchedNoTable {
			if name, ok := e.registerCandidate(o); ok {
				reason, tables = "", []string{registerKey(o.Root)}
				registers[tables[0]] = name
			}
		}
		if reason != "" {
			e.opts.Metrics.unmatchedEvent(reason)
			if reason == UnmatchedNoTable {
				e.log.Debug("event for no selected table", zap.String("object", ev.URL()))
			}
			continue
		}
		e.opts.Metrics.matchedEvent()
		at := ev.Time
		if at.IsZero() || at.After(now) {
			at = now
		}
		for _, t := range tables {
			v := want[t]
			if _, ok := want[t]; !ok {
				v = -1
			}
			if o.File.Kind == "commit" {
				v = max(v, o.File.Version)
			}
			want[t] = v
			times[t] = append(times[t], at)
		}
	}
	if len(want) == 0 {
		m.Ack()
		return
	}
	ref := &ackRef{m: m, left: len(want)}
	e.mu.Lock()
	for t, v := range want {
		name, register := registers[t]
		if !register {
			e.dirty.Mark(t)
		}
		p := e.pending[t]
		if p == nil {
			p = &pendingTable{due: now.Add(e.opts.Debounce), first: now, want: -1}
			if register {
				p.register, p.name = strings.TrimPrefix(t, registerKey("")), name
			}
			e.pending[t] = p
		}
		p.want = max(p.want, v)
		p.acks = append(p.acks, ref)
		p.times = append(p.times, times[t]...)
	}
	n := len(e.pending)
	e.mu.Unlock()
	e.opts.Metrics.pending(n)
	e.poke()
}

// match finds the selected tables an object event names, or why none.
func (e *Events) match(ev ObjectEvent) (string, []string, LogObject) {
	if !ev.Created {
		return UnmatchedNotCreated, nil, LogObject{}
	}
	o, ok := logObjectOf(ev)
	if !ok {
		return UnmatchedNotLog, nil, o
	}
	if !o.Triggers() {
		return UnmatchedNotCommit, nil, o
	}
	names := e.dirty.Lookup(o.Root)
	e.mu.Lock()
	r := e.r
	e.mu.Unlock()
	var out []string
	for _, n := range names {
		if _, known := tracked(r, n); r == nil || known {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return UnmatchedNoTable, nil, o
	}
	return "", out, o
}

// registerCandidate reports whether the reconciler registers tables from
// events and o's table root is one to register (see Registrar).
func (e *Events) registerCandidate(o LogObject) (string, bool) {
	e.mu.Lock()
	r := e.r
	e.mu.Unlock()
	reg, ok := r.(Registrar)
	if !ok || o.Root == "" {
		return "", false
	}
	return reg.RegisterCandidate(o.Root)
}

// tracked asks r whether it tracks the table; a nil r (Run not started)
// tracks nothing.
func tracked(r Reconciler, name string) (time.Time, bool) {
	if r == nil {
		return time.Time{}, false
	}
	return r.Tracked(name)
}

func (e *Events) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// schedule hands due tables to the workers until ctx is done.
func (e *Events) schedule(ctx context.Context, work chan<- string) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := e.opts.Now()
		var due []string
		next := now.Add(time.Hour)
		e.mu.Lock()
		for name, p := range e.pending {
			switch {
			case p.running:
			case !p.due.After(now):
				due = append(due, name)
			case p.due.Before(next):
				next = p.due
			}
		}
		for _, name := range due {
			e.pending[name].running = true
		}
		e.mu.Unlock()
		for _, name := range due {
			select {
			case work <- name:
			case <-ctx.Done():
				return
			}
		}
		if len(due) > 0 {
			continue
		}
		t.Reset(next.Sub(now))
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-t.C:
		}
	}
}

// process reconciles one pending table and settles its messages.
func (e *Events) process(ctx context.Context, r Reconciler, name string) {
	e.mu.Lock()
	p := e.pending[name]
	batch := *p
	p.acks, p.times, p.want = nil, nil, -1
	e.mu.Unlock()
	if batch.register != "" {
		e.processRegister(ctx, r.(Registrar), name, batch)
		return
	}
	target, ok := e.dirty.Target(name) // as the last cycle selected it (name and mode)
	if !ok {
		// Never reconciled by a cycle, so its mode is unknown: leave it to
		// the cron cycle rather than guess.
		e.settle(name, batch, unconfirmed)
		return
	}
	if next, _ := r.Tracked(name); next.After(e.opts.Now()) {
		// The table is backing off after failures.
		if e.opts.Now().Sub(batch.first) >= e.opts.MaxWait {
			e.opts.Metrics.expired()
			e.settle(name, batch, unconfirmed)
			return
		}
		e.retry(name, batch, next)
		return
	}
	res := r.Reconcile(ctx, target)
	seen := res.Outcome != sync.OutcomeFailed &&
		(batch.want < 0 || res.LogVersion != nil && *res.LogVersion >= batch.want)
	if res.Outcome == sync.OutcomeFlagged && res.LogVersion == nil {
		seen = true // the log cannot be read; another try will not change that
	}
	now := e.opts.Now()
	switch {
	case seen:
		e.settle(name, batch, confirmed)
	case now.Sub(batch.first) >= e.opts.MaxWait || ctx.Err() != nil:
		e.opts.Metrics.expired()
		e.log.Warn("event not confirmed by the log in time; returned to the broker and left to the cron cycle",
			zap.String("table", name), zap.Int64("want_version", batch.want), zap.Any("log_version", res.LogVersion),
			zap.String("outcome", string(res.Outcome)), zap.String("reason", res.Reason))
		e.settle(name, batch, unconfirmed)
	default:
		next := now.Add(e.opts.Retry.Delay(batch.attempts + 1))
		if na, _ := r.Tracked(name); na.After(next) {
			next = na
		}
		batch.attempts++
		e.retry(name, batch, next)
	}
}

// processRegister registers the table at a pending root (key) and settles
// its messages: once decided (registered, flagged, waiting for the cap,
// recorded elsewhere) they are acknowledged; while its log shows no
// commit yet, or the registration failed, it is tried again until MaxWait.
// When the table is tracked now but the registration did not read the
// announced commit (or discovery registered it meanwhile), the batch
// becomes the table's, reconciled as any event's.
func (e *Events) processRegister(ctx context.Context, reg Registrar, key string, batch pendingTable) {
	res, ok := reg.RegisterAt(ctx, batch.register)
	now := e.opts.Now()
	if !ok || res.Outcome == sync.OutcomeFailed {
		if now.Sub(batch.first) >= e.opts.MaxWait || ctx.Err() != nil {
			e.opts.Metrics.expired()
			e.log.Warn("event for a table to register not decided in time; returned to the broker and left to discovery",
				zap.String("table", batch.name), zap.String("root", batch.register), zap.String("reason", res.Reason))
			e.settle(key, batch, unconfirmed)
			return
		}
		batch.attempts++
		e.retry(key, batch, now.Add(e.opts.Retry.Delay(batch.attempts)))
		return
	}
	behind := res.Outcome == "" || res.Outcome == sync.OutcomeRegistered && batch.want >= 0 &&
		(res.LogVersion == nil || *res.LogVersion < batch.want)
	if _, tracked := e.dirty.Target(res.Table); behind && tracked {
		e.handOver(res.Table, batch)
		batch.acks, batch.times = nil, nil
	}
	e.settle(key, batch, confirmed)
}

// handOver queues a batch of events as the named table's.
func (e *Events) handOver(name string, batch pendingTable) {
	now := e.opts.Now()
	e.mu.Lock()
	e.dirty.Mark(name)
	p := e.pending[name]
	if p == nil {
		p = &pendingTable{due: now, first: batch.first, want: -1}
		e.pending[name] = p
	}
	p.want = max(p.want, batch.want)
	p.acks = append(p.acks, batch.acks...)
	p.times = append(p.times, batch.times...)
	e.mu.Unlock()
	e.poke()
}

// retry puts a batch back to be reconciled again at next.
func (e *Events) retry(name string, batch pendingTable, next time.Time) {
	e.mu.Lock()
	p := e.pending[name]
	p.running = false
	p.acks = append(batch.acks, p.acks...)
	p.times = append(batch.times, p.times...)
	p.want = max(p.want, batch.want)
	p.first, p.attempts = batch.first, batch.attempts
	p.due = next
	e.mu.Unlock()
	e.poke()
}

// verdict is how a batch of a table's events ends.
type verdict int

const (
	// confirmed: a reconcile saw the announced commit; the messages are
	// acknowledged.
	confirmed verdict = iota
	// unconfirmed: no reconcile saw it (in time); the messages go back to
	// the broker and the next cron cycle reads the log in full.
	unconfirmed
)

// settle acknowledges (confirmed) or returns (unconfirmed) the batch's
// messages and drops the table from the queue unless new events arrived
// meanwhile.
func (e *Events) settle(name string, batch pendingTable, v verdict) {
	ok, nack := v == confirmed, v == unconfirmed
	now := e.opts.Now()
	var done []*ackRef
	e.mu.Lock()
	for _, a := range batch.acks {
		a.left--
		a.nack = a.nack || nack
		if a.left == 0 {
			done = append(done, a)
		}
	}
	p := e.pending[name]
	p.running = false
	// Not seen at the announced version: the next cron cycle must read the
	// log in full.
	if p.register == "" {
		e.dirty.Settle(name, ok, len(p.acks) > 0)
	}
	if len(p.acks) == 0 {
		delete(e.pending, name)
	} else {
		p.first, p.attempts, p.due = now, 0, now.Add(e.opts.Debounce)
	}
	n := len(e.pending)
	e.mu.Unlock()
	if ok {
		for _, t := range batch.times {
			e.opts.Metrics.observeLag(now.Sub(t))
		}
	}
	for _, a := range done {
		if a.nack && a.m.Nackable() {
			a.m.Nack()
		} else {
			a.m.Ack()
		}
	}
	e.opts.Metrics.pending(n)
	select {
	case e.space <- struct{}{}:
	default:
	}
	e.poke()
}
