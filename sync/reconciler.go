package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
)

// Options configures a Reconciler. Catalog and Selector are required.
type Options struct {
	Catalog  *catalog.Client
	Selector *Selector
	Shard    Shard
	// VendedCredentials reads each log with READ credentials vended by the
	// catalog; otherwise the process's ambient cloud credentials are used.
	VendedCredentials bool
	// LogOptions are passed to deltalog.Open for every table.
	LogOptions []deltalog.Option
	Diff       DiffOptions
	// Concurrency bounds the tables reconciled at once (default 4).
	Concurrency int
	// Backoff spaces out retries of failing tables across cycles.
	Backoff Backoff
	// DryRun never writes: drift that would be synced is reported instead.
	DryRun bool
	// MaxAttempts bounds reload-and-replan rounds after an etag conflict (default 3).
	MaxAttempts int
	// TableTimeout bounds one table's reconcile (default 5m). A table in
	// flight when the cycle's context is cancelled still finishes, within it.
	TableTimeout time.Duration
	Logger       *zap.Logger
	Metrics      *Metrics
	// Events, when set, shares reconcile slots with event-driven sync and
	// lets cycles skip the LIST of tables with no event since their last
	// full read (see events_gate.go). Nil: every cycle reads every log.
	Events *Events
	// Now is the clock (default time.Now).
	Now func() time.Time
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
}

// tableState is what the reconciler remembers about a table between cycles.
// status is guarded by Reconciler.mu; the log handle and snapshot belong to
// the one worker reconciling the table.
type tableState struct {
	status TableStatus
	table  *deltalog.Table
	url    string
	snap   *deltalog.Snapshot
	// credsValid is until when the vended credentials the table was opened
	// with may still be used (zero: not vended, or expiry unknown).
	credsValid time.Time
}

// New checks opts and returns a Reconciler.
func New(opts Options) (*Reconciler, error) {
	if opts.Catalog == nil {
		return nil, errors.New("sync: Options.Catalog is required")
	}
	if opts.Selector == nil {
		return nil, errors.New("sync: Options.Selector is required")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.TableTimeout <= 0 {
		opts.TableTimeout = 5 * time.Minute
	}
	if opts.Backoff.Initial <= 0 {
		opts.Backoff = DefaultBackoff()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := opts.Logger
	if l == nil {
		l = zap.NewNop()
	}
	return &Reconciler{opts: opts, log: l, tables: map[string]*tableState{}}, nil
}

// Status returns a snapshot of every known table's status, sorted by name.
func (r *Reconciler) Status() []TableStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]TableStatus, 0, len(r.tables))
	for _, st := range r.tables {
		s := st.status
		s.Drift = append([]Kind(nil), s.Drift...)
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
	log := r.log.With(zap.Int64("cycle", cycle))
	rep := &Report{Cycle: cycle, Started: start, DryRun: r.opts.DryRun}

	targets, skipped, err := r.discover(ctx)
	rep.Skipped = skipped
	if err != nil {
		rep.Err = err
		r.opts.Metrics.recordError(ReasonCatalog)
		log.Error("listing tables", zap.Error(err))
	}
	var due []Target
	for _, t := range targets {
		if next := r.state(t.Name.String()).nextAttempt(r); !next.IsZero() && start.Before(next) {
			rep.Deferred = append(rep.Deferred, t.Name.String())
			continue
		}
		due = append(due, t)
	}
	rep.Results = r.runAll(withCycle(ctx, cycle), due)
	rep.Interrupted = ctx.Err() != nil && len(rep.Results) < len(due)
	if err == nil && !rep.Interrupted {
		r.forgetOthers(targets)
	}
	rep.Duration = r.opts.Now().Sub(start)
	ok := rep.Err == nil && rep.Count(OutcomeFailed) == 0
	r.opts.Metrics.recordCycle(rep.Duration, ok, r.opts.Now())
	if !rep.Interrupted {
		r.mu.Lock()
		r.ready = err == nil // a completed cycle, with the catalog listed
		r.mu.Unlock()
	}
	log.Info("cycle finished", zap.String("summary", rep.Summary()))
	return rep
}

func (st *tableState) nextAttempt(r *Reconciler) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return st.status.NextAttempt
}

// runAll reconciles targets with at most Concurrency workers.
func (r *Reconciler) runAll(ctx context.Context, targets []Target) []Result {
	results := make([]Result, len(targets))
	done := make([]bool, len(targets))
	work := make(chan int)
	var wg stdsync.WaitGroup
	for w := 0; w < min(r.opts.Concurrency, len(targets)); w++ {
		wg.Go(func() {
			for i := range work {
				results[i] = r.Reconcile(ctx, targets[i])
				done[i] = true
			}
		})
	}
feed:
	for i := range targets {
		if ctx.Err() != nil {
			break // a select with both cases ready picks at random
		}
		select {
		case <-ctx.Done():
			break feed
		case work <- i:
		}
	}
	close(work)
	wg.Wait()
	out := results[:0]
	for i := range results {
		if done[i] {
			out = append(out, results[i])
		}
	}
	return out
}

// forgetOthers drops state and metrics of tables no longer selected.
func (r *Reconciler) forgetOthers(targets []Target) {
	keep := map[string]bool{}
	for _, t := range targets {
		keep[t.Name.String()] = true
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
		r.opts.Metrics.forgetTable(name)
	}
}

// record stores a table's result as its status and publishes metrics.
func (r *Reconciler) record(res Result) {
	now := r.opts.Now()
	st := r.state(res.Table)
	r.mu.Lock()
	s := st.status
	s.Table, s.Type, s.Mode = res.Table, res.Type, res.Mode
	s.Status, s.Outcome, s.Reason = res.Status, res.Outcome, res.Reason
	s.Drift = nil
	// Drift is what still differs: a confirmed sync leaves none, although
	// the result keeps the plan it fixed for the report.
	if res.Plan != nil && res.Status != StatusSynced {
		for _, k := range res.Plan.Kinds() {
			if k != KindVersion {
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
	case res.ErrorReason != "": // flagged for a problem (unreadable log, unsupported types)
		s.Failures, s.NextAttempt, s.LastError = 0, time.Time{}, res.Reason
	default:
		s.Failures, s.NextAttempt, s.LastError = 0, time.Time{}, ""
	}
	st.status = s
	r.mu.Unlock()
	r.opts.Metrics.recordTable(s)
	if res.ErrorReason != "" {
		r.opts.Metrics.recordError(res.ErrorReason)
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

// errorf builds a reason string.
func errorf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
