package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/metrics"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/deltasync/deltasync/sync/register"
)

// Options configures a Reconciler. Catalog and Selector are required.
type Options struct {
	// Catalog is the catalog whose records are kept true to the logs,
	// through its kind (catalog/uc, catalog/hms), chosen once by the
	// caller from the catalog's URL.
	Catalog  catalog.Kind
	Selector *Selector
	Shard    Shard
	// VendedCredentials reads each log with READ credentials vended by the
	// catalog; otherwise the process's ambient cloud credentials are used.
	VendedCredentials bool
	// Storage decides which catalog locations may be read and how each
	// bucket is opened (nil: DefaultAllowedLocations, no bucket options).
	Storage *StoragePolicy
	// LogOptions are passed to deltalog.Open for every table.
	LogOptions []deltalog.Option
	Diff       plan.DiffOptions
	// Concurrency bounds the catalog requests of full reconciles in
	// flight at once (default 4): each reconcile takes one of Concurrency
	// turns for each of its catalog calls (concurrency.go).
	Concurrency int
	// ReadConcurrency bounds the tables read in full at once (default
	// DefaultReadConcurrency, never below Concurrency): a full read waits
	// on storage round trips, not on the catalog, so more of them run at
	// once than talk to the catalog.
	ReadConcurrency int
	// CheckConcurrency bounds the unchanged-table checks of a cycle run
	// at once on one bucket (default DefaultCheckConcurrency). A check is
	// the fast path alone (one LIST of a log, no catalog request), so it
	// runs on its own workers, not behind full reconciles: a steady cycle
	// on an object store is bound by round trips, and the storage limits
	// (deltalog.StorageGates), not this, bound the requests in flight.
	// The bound is per bucket so that the checks of a bucket the store
	// throttles, waiting out its backoff, hold no other bucket's checks.
	CheckConcurrency int
	// Backoff spaces out retries of failing tables across cycles.
	Backoff Backoff
	// WatermarkUpdates says when a watermark-only update is sent
	// (default WatermarkEveryCycle).
	WatermarkUpdates WatermarkUpdates
	// RefusalBackoff spaces out retries of tables whose update the catalog
	// refused (default DefaultRefusalBackoff).
	RefusalBackoff Backoff
	// DryRun never writes: drift that would be synced is reported instead.
	DryRun bool
	// Audit is where every catalog write, and every write refused or
	// held, is recorded (audittrail.go); zero: nowhere.
	Audit change.AuditOptions
	// Notifier is told every table outcome (notice.go); nil: no one.
	Notifier Notifier
	// MaxAttempts bounds reload-and-replan rounds after an etag conflict (default 3).
	MaxAttempts int
	// TableTimeout bounds one table's reconcile (default 5m). A table in
	// flight when the cycle's context is cancelled still finishes, within it.
	TableTimeout time.Duration
	Logger       *zap.Logger
	Metrics      *metrics.Metrics
	// ResyncInterval is how long a table verified in sync may be confirmed
	// by the listing alone: while its listed updated_at and its log's
	// latest version stay the same, no per-table catalog request is sent.
	// Every table is fully re-read at least this often (the first re-reads
	// of tables verified together are spread over the interval). 0: every
	// table is fully re-read every cycle.
	ResyncInterval time.Duration
	// Dirty, when set, is filled by a source of work (sync/events): it
	// shares reconcile slots with the source and lets cycles skip the LIST
	// of tables nothing marked since their last full read (dirty.go). Nil:
	// every cycle reads every log.
	Dirty *Dirty
	// Now is the clock (default time.Now).
	Now func() time.Time

	// Register, when set with rules, registers the Delta tables found in
	// storage under its location templates (package sync/register).
	Register *register.Options

	// ShutdownDrain bounds a table in flight once the cycle's context is
	// cancelled (default DefaultShutdownDrain).
	ShutdownDrain time.Duration
}

// Reconciler keeps catalog records true to Delta logs. Sync runs one cycle
// over every selected table; plan, once and run all call it. It is safe for
// concurrent use; Status may be called at any time.
type Reconciler struct {
	opts Options
	log  *zap.Logger

	mu     stdsync.Mutex
	tables map[string]*tableState
	cycle  int64
	ready  bool
	// progress is the running or last cycle's (progress.go).
	progress CycleProgress
	// logOptions are what deltalog.Open gets for every table: the
	// LogOptions and the storage metrics' observer.
	logOptions []deltalog.Option
	// registrar registers tables found in storage (nil: no register rules).
	registrar *register.Registrar
	// kind is Options.Catalog, its reconcile calls taking turns
	// (concurrency.go).
	kind turnKind
	// turns bound the catalog calls of full reconciles (concurrency.go).
	turns catalogTurns
	// lost are the writes audited unknown, resolved by their table's next
	// reconcile (resolve.go).
	lost lostWrites
}

// tableState is what the reconciler remembers about a table between cycles.
// status is guarded by Reconciler.mu; the log handle and snapshot belong to
// the one worker reconciling the table.
type tableState struct {
	status TableStatus
	// tableLog is the table's log handle and last snapshot (logread.go).
	tableLog
	// verified is the last full verdict "in sync" (fast path, fastpath.go).
	verified verified
	// describedID is the metaData.id of the last log read at loc that the
	// catalog's watermark was not ahead of: the table the record describes,
	// the evidence recreated.go compares a log behind the watermark with.
	describedID string
}

// New checks opts and returns a Reconciler.
func New(opts Options) (*Reconciler, error) {
	switch {
	case opts.Catalog == nil:
		return nil, errors.New("sync: Options.Catalog is required")
	case opts.VendedCredentials && !vends(opts.Catalog):
		return nil, fmt.Errorf("sync: a %s vends no credentials: read the logs with the process's own (credentials: ambient)", kindTitle(opts.Catalog))
	}
	if opts.Selector == nil {
		return nil, errors.New("sync: Options.Selector is required")
	}
	if opts.CheckConcurrency <= 0 {
		opts.CheckConcurrency = DefaultCheckConcurrency
	}
	opts.ReadConcurrency = ResolveReadConcurrency(opts.ReadConcurrency, opts.Concurrency)
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.TableTimeout <= 0 {
		opts.TableTimeout = 5 * time.Minute
	}
	if opts.ShutdownDrain <= 0 {
		opts.ShutdownDrain = DefaultShutdownDrain
	}
	if opts.Backoff.Initial <= 0 {
		opts.Backoff = DefaultBackoff()
	}
	if opts.RefusalBackoff.Initial <= 0 {
		opts.RefusalBackoff = DefaultRefusalBackoff()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := opts.Logger
	if l == nil {
		l = zap.NewNop()
	}
	r := &Reconciler{opts: opts, log: l, tables: map[string]*tableState{}}
	r.turns = make(catalogTurns, opts.Concurrency)
	r.kind = turnKind{Kind: opts.Catalog, turns: r.turns}
	a, err := register.New(opts.Register, r.kind, registerHost{r: r, policy: opts.Storage})
	if err != nil {
		return nil, err
	}
	r.registrar = a
	opts.Dirty.attach()
	r.logOptions = append([]deltalog.Option(nil), opts.LogOptions...)
	if opts.Metrics != nil {
		// Built once: every open table keeps its options, and the
		// metrics are safe for concurrent use, so no table needs a
		// wrapper or a lock of its own around them.
		r.logOptions = append(r.logOptions, deltalog.WithConcurrentObserver(opts.Metrics.ObserveStorage))
	}
	// Workers append a table's credentials to it: with no spare
	// capacity, each append copies instead of writing into the shared array.
	r.logOptions = slices.Clip(r.logOptions)
	return r, nil
}

// ReadConcurrency returns how many tables r reads in full at once: its
// Options.ReadConcurrency as ResolveReadConcurrency resolved it.
func (r *Reconciler) ReadConcurrency() int { return r.opts.ReadConcurrency }

// Status returns a snapshot of every known table's status, sorted by name.
func (r *Reconciler) Status() []TableStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]TableStatus, 0, len(r.tables))
	for _, st := range r.tables {
		s := st.status
		s.Drift = append([]plan.DriftKind(nil), s.Drift...)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out
}

// Ready reports whether a cycle has completed with the catalog reachable.
func (r *Reconciler) Ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready
}

// Close releases the open table handles.
func (r *Reconciler) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, st := range r.tables {
		if st.table != nil {
			errs = append(errs, st.table.Close())
			st.table, st.snap = nil, nil
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) state(name string) *tableState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.tables[name]
	if !ok {
		st = &tableState{status: TableStatus{Table: name, Status: StatusUnknown}}
		r.tables[name] = st
	}
	return st
}

// Sync runs one cycle: it lists the selected tables this shard owns,
// reconciles each (bounded concurrency), and returns the report. When ctx is
// cancelled no new table is started; tables in flight finish.
func (r *Reconciler) Sync(ctx context.Context) *Report {
	start := r.opts.Now()
	r.mu.Lock()
	r.cycle++
	cycle := r.cycle
	r.mu.Unlock()
	r.progressStart(cycle, start)
	log := r.log.With(zap.Int64("cycle", cycle))
	rep := &Report{Cycle: cycle, Started: start, DryRun: r.opts.DryRun, Register: r.registrar != nil}
	rep.Results = r.registerFound(ctx, log)
	listed := r.registrar.Kept()

	// Tables are handed to the workers as their listing page arrives.
	jobs := make(chan Target, listBuffer)
	var mu stdsync.Mutex
	wait := r.startWorkers(withCycle(ctx, cycle), jobs, func(res Result) {
		mu.Lock()
		rep.Results = append(rep.Results, res)
		mu.Unlock()
		r.progressDone()
	})
	dispatched, stopped := 0, false
	skipped, err := r.discover(ctx, func(t Target) bool {
		listed = append(listed, t.Name.String())
		if next := r.state(t.Name.String()).nextAttempt(r); !next.IsZero() && start.Before(next) {
			rep.Deferred = append(rep.Deferred, t.Name.String())
			return true
		}
		if ctx.Err() != nil {
			stopped = true // a select with both cases ready picks at random
			return false
		}
		r.progressListed(1) // before the send: a worker may finish it at once
		select {
		case <-ctx.Done():
			r.progressListed(-1)
			stopped = true
			return false
		case jobs <- t:
			dispatched++
			return true
		}
	})
	close(jobs)
	r.progressListingDone()
	wait()
	rep.Skipped = skipped
	if err != nil {
		rep.Err = err
		r.opts.Metrics.RecordError(string(ReasonCatalog))
		log.Error("listing tables", zap.Error(err))
	}
	sort.Slice(rep.Results, func(i, j int) bool { return rep.Results[i].Table < rep.Results[j].Table })
	sort.Strings(rep.Deferred)
	rep.Interrupted = ctx.Err() != nil && (stopped || len(rep.Results) < dispatched)
	if err == nil && !rep.Interrupted {
		r.forgetOthers(listed)
	}
	rep.ReadOnly = r.ReadOnlyCatalogs()
	rep.Duration = r.opts.Now().Sub(start)
	ok := rep.Err == nil && rep.Count(OutcomeFailed) == 0
	r.opts.Metrics.RecordCycle(rep.Duration, ok, r.opts.Now())
	r.progressEnd(start.Add(rep.Duration))
	if !rep.Interrupted {
		r.mu.Lock()
		r.ready = err == nil // a completed cycle, with the catalog listed
		r.mu.Unlock()
	}
	log.Info("cycle finished", zap.String("summary", rep.Summary()))
	return rep
}

// Tracked reports whether the reconciler tracks the table (it is selected
// and owned by this shard as of the last cycle) and when a failing table
// may be reconciled again (zero: now).
func (r *Reconciler) Tracked(name string) (nextAttempt time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.tables[name]
	if !ok {
		return time.Time{}, false
	}
	return st.status.NextAttempt, true
}

func (st *tableState) nextAttempt(r *Reconciler) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return st.status.NextAttempt
}

// listBuffer is how many listed tables may wait for a worker: about one
// listing page, so the next page is fetched while the workers still have
// work.
const listBuffer = 64

// DefaultCheckConcurrency is the default of Options.CheckConcurrency:
// deltalog's default storage requests in flight per process, so the
// checks can keep the storage limits busy (10,000 unchanged tables on S3
// at 20 ms per LIST: 64 per bucket in flight is 3 s of round trips, where
// 4 workers needed at least 50 s: floors from the settings, not measured).
const DefaultCheckConcurrency = 256

// startWorkers starts the cycle's two pools: up to CheckConcurrency
// checkers per bucket take the listed tables and confirm the unchanged ones with the fast path
// alone; a table the fast path cannot confirm is reconciled in full by
// one of ReadConcurrency workers (their catalog calls in Concurrency
// turns, concurrency.go). The workers take tables in listing order
// (each waits for its table's check), and the queue between the two pools
// is not bounded, so checks never wait behind full reconciles. Each
// bucket's checks have a lane of their own (checkLane): with one bound
// for all, the checks of a throttled bucket, each waiting out the
// bucket's backoff, took every checker and the other buckets' tables
// waited behind them (BenchmarkScaleS3Throttled: a SlowDown burst on one
// bucket made another's steady cycle 89 times longer). Each result
// is handed to done; the returned func waits for both pools.
func (r *Reconciler) startWorkers(ctx context.Context, jobs <-chan Target, done func(Result)) (wait func()) {
	type job struct {
		t    Target
		fast chan bool // the check's verdict: true when it confirmed the table
	}
	// A check runs on a goroutine of its own, at most CheckConcurrency at
	// once per lane: idle checkers would be goroutines held for the whole cycle.
	q := newOrderedQueue[job]()
	var checkers, workers, lanes stdsync.WaitGroup
	check := func(j job, sem chan struct{}) {
		defer func() { <-sem }()
		ok := false
		if ctx.Err() == nil {
			var res Result
			if res, ok = r.check(ctx, j.t); ok {
				done(res)
			}
		}
		j.fast <- ok
	}
	for range r.opts.ReadConcurrency {
		workers.Go(func() {
			for j, more := q.pop(); more; j, more = q.pop() {
				if <-j.fast || ctx.Err() != nil {
					continue // confirmed by its check; or cancelled: start nothing new
				}
				done(r.reconcileTable(ctx, j.t, false))
			}
		})
	}
	// lane starts the checks of one bucket's tables, in listing order.
	lane := func(lq *orderedQueue[job]) {
		sem := make(chan struct{}, r.opts.CheckConcurrency)
		for j, more := lq.pop(); more; j, more = lq.pop() {
			sem <- struct{}{}
			checkers.Go(func() { check(j, sem) })
		}
	}
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		byBucket := map[string]*orderedQueue[job]{}
		for t := range jobs {
			j := job{t: t, fast: make(chan bool, 1)}
			q.push(j)
			k := checkLane(t)
			lq := byBucket[k]
			if lq == nil {
				lq = newOrderedQueue[job]()
				byBucket[k] = lq
				lanes.Go(func() { lane(lq) })
			}
			lq.push(j)
		}
		q.close()
		for _, lq := range byBucket {
			lq.close()
		}
		lanes.Wait() // checkers.Go is not called after this
	}()
	return func() {
		<-dispatched // every check started (checkers.Go is not called after this)
		checkers.Wait()
		workers.Wait()
	}
}

// checkLane names the bucket of a listed table's location ("s3://bucket",
// "abfss://container@account..."): the checks of one lane share its
// bound. A table without a parsable location has the lane "".
func checkLane(t Target) string {
	if t.Listed == nil {
		return ""
	}
	l, err := location.Parse(t.Listed.Location)
	if err != nil {
		return ""
	}
	return l.Scheme + "://" + l.Bucket
}

// orderedQueue is an unbounded FIFO for one producer and many consumers.
type orderedQueue[T any] struct {
	mu     stdsync.Mutex
	cond   *stdsync.Cond
	items  []T
	closed bool
}

func newOrderedQueue[T any]() *orderedQueue[T] {
	q := &orderedQueue[T]{}
	q.cond = stdsync.NewCond(&q.mu)
	return q
}

func (q *orderedQueue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *orderedQueue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop returns the oldest item, waiting for one; more is false once the
// queue is closed and empty.
func (q *orderedQueue[T]) pop() (v T, more bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return v, false
	}
	v = q.items[0]
	var zero T
	q.items[0] = zero
	q.items = q.items[1:]
	return v, true
}

// forgetOthers drops state and metrics of tables no longer selected.
func (r *Reconciler) forgetOthers(names []string) {
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, st := range r.tables {
		if keep[name] {
			continue
		}
		if st.table != nil {
			_ = st.table.Close()
		}
		delete(r.tables, name)
		r.opts.Metrics.ForgetTable(name)
	}
}

// record stores a table's result as its status and publishes metrics.
func (r *Reconciler) record(res Result) {
	now := r.opts.Now()
	st := r.state(res.Table)
	r.mu.Lock()
	s := st.status
	// s.Table stays: it is res.Table, and the same string as the
	// table's key, where res.Table is a copy made for this cycle.
	s.Type, s.Mode = tableType(res.Type), res.Mode
	s.Status, s.Outcome, s.Reason, s.ErrorReason = res.Status, res.Outcome, res.Reason, res.ErrorReason
	if res.Outcome != OutcomeFailed || res.Plan != nil { // a failed read decided nothing: held as it was
		s.Held = res.Held
	}
	s.Drift = nil
	// Drift is what still differs: a confirmed sync leaves none, although
	// the result keeps the plan it fixed for the report.
	if res.Plan != nil && res.Status != StatusSynced {
		for _, k := range res.Plan.Kinds() {
			if k != plan.KindVersion {
				s.Drift = append(s.Drift, k)
			}
		}
	}
	if res.LogVersion != nil {
		s.LogVersion = res.LogVersion
	}
	if res.CatalogVersion != nil {
		s.CatalogVersion = res.CatalogVersion
	}
	s.LastCycle = now
	if res.Status == StatusSynced {
		s.LastSync = now
		s.OutOfSyncCycles = 0
	} else {
		s.OutOfSyncCycles++
	}
	switch {
	case res.Outcome == OutcomeFailed:
		s.Failures++
		s.LastError = res.Reason
		s.NextAttempt = now.Add(r.opts.Backoff.Delay(s.Failures))
	case res.ErrorReason == ReasonRefused:
		s.Failures++
		s.LastError = res.Reason
		s.NextAttempt = now.Add(r.opts.RefusalBackoff.Delay(s.Failures))
	case res.ErrorReason != "": // flagged for a problem (unreadable log, unsupported types)
		s.Failures, s.NextAttempt, s.LastError = 0, time.Time{}, res.Reason
	default:
		s.Failures, s.NextAttempt, s.LastError = 0, time.Time{}, ""
	}
	st.status = s
	r.mu.Unlock()
	r.opts.Metrics.RecordTable(metricsTable(s))
	if res.ErrorReason != "" {
		r.opts.Metrics.RecordError(string(res.ErrorReason))
	}
}

type cycleKey struct{}

// withCycle tags ctx with the cycle number, for the "cycle" log key.
func withCycle(ctx context.Context, cycle int64) context.Context {
	return context.WithValue(ctx, cycleKey{}, cycle)
}

// logger returns the reconciler's logger with the cycle of ctx, if any.
func (r *Reconciler) logger(ctx context.Context) *zap.Logger {
	if c, ok := ctx.Value(cycleKey{}).(int64); ok {
		return r.log.With(zap.Int64("cycle", c))
	}
	return r.log
}
