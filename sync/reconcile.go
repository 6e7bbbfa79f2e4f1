package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/deltasync/deltasync/sync/register"
)

// Target is one table a cycle reconciles.
type Target struct {
	Name catalog.TableName
	Mode Mode
	// Listed is the table's entry in this cycle's listing, or nil. With it
	// an unchanged table can be confirmed without a per-table catalog
	// request (see Options.ResyncInterval), and the kind may plan from
	// what it carries; without it the table is always fully re-read.
	Listed *catalog.Listed
}

// Result is what one reconcile found and did.
type Result struct {
	Table string `json:"table"`
	Type  string `json:"table_type,omitempty"`
	// TableID and Etag are the record's uuid and etag as last read
	// before deciding: what a saved plan guards its update with.
	TableID        string      `json:"table_id,omitempty"`
	Etag           string      `json:"etag,omitempty"`
	Mode           Mode        `json:"mode"`
	Outcome        Outcome     `json:"outcome"`
	Status         Status      `json:"sync_status"`
	Reason         string      `json:"reason,omitempty"`
	ErrorReason    ErrorReason `json:"error_reason,omitempty"`
	Plan           *plan.Plan  `json:"diff,omitempty"`
	Actions        []string    `json:"actions,omitempty"` // update actions sent (or, in a dry run, that would be)
	LogVersion     *int64      `json:"log_version,omitempty"`
	CatalogVersion *int64      `json:"catalog_version,omitempty"`
	Attempts       int         `json:"attempts,omitempty"`
	// WouldUpdate is set by a dry run for drift that a real run would sync.
	WouldUpdate bool `json:"would_update,omitempty"`
	// NotApplied is set when the update carrying Actions failed, so the
	// catalog record was not changed.
	NotApplied bool `json:"not_applied,omitempty"`
	// Write is the guarded write behind Actions: sent, or in a dry run
	// what would be (what a saved plan keeps), or held.
	Write *catalog.Write `json:"-"`
	// Refused is the catalog's answer when it refused the update (or its
	// pre-flight check did); ErrorReason is then ReasonRefused.
	Refused *catalog.Refusal `json:"refused,omitempty"`
	// Registration is what a register rule creates (or would) for a
	// table found in storage (package sync/register).
	Registration *register.Registration `json:"register,omitempty"`
	// Held is HeldDestructive when the update carries destructive changes
	// and the table's rule holds them (OnDestructiveHold): nothing of it
	// was sent. Updates and Actions are then what was held.
	Held string `json:"held,omitempty"`
}

// Reconcile brings one table's catalog record in line with its log, or
// flags why it cannot. It is level-based: both sides are re-read every time.
// Cancelling ctx does not interrupt it at once; it runs to completion
// within Options.TableTimeout, and within Options.ShutdownDrain of ctx
// being cancelled.
func (r *Reconciler) Reconcile(ctx context.Context, t Target) Result {
	return r.reconcileTable(ctx, t, true)
}

// reconcileTable is Reconcile, with the fast path tried first when fast
// is set (a cycle's checkers have tried it already).
func (r *Reconciler) reconcileTable(ctx context.Context, t Target, fast bool) Result {
	defer r.opts.Dirty.enter(t)()
	ctx, cancel := tableContext(ctx, r.opts.TableTimeout, r.opts.ShutdownDrain)
	defer cancel()
	res, n := r.reconcile(ctx, t, fast)
	r.record(res)
	r.logResult(ctx, res)
	r.notify(ctx, res, n)
	return res
}

// check is a cycle's first look at a table: the fast path alone. ok is
// false when the table needs a full reconcile (nothing is recorded then).
// It holds the table, not one of the reconcile slots: it costs one LIST.
func (r *Reconciler) check(ctx context.Context, t Target) (Result, bool) {
	defer r.opts.Dirty.enterTable(t)()
	ctx, cancel := tableContext(ctx, r.opts.TableTimeout, r.opts.ShutdownDrain)
	defer cancel()
	res, ok := r.fastPath(ctx, r.state(t.Name.String()), t)
	if !ok {
		return Result{}, false
	}
	r.record(res)
	r.logResult(ctx, res)
	r.notify(ctx, res, nil)
	return res, true
}

func (r *Reconciler) logResult(ctx context.Context, res Result) {
	l := r.logger(ctx).With(zap.String("table", res.Table))
	if res.LogVersion != nil {
		l = l.With(zap.Int64("version", *res.LogVersion))
	}
	switch res.Outcome {
	case OutcomeFailed:
		l.Warn("reconcile failed", zap.String("reason", res.Reason), zap.String("error_reason", string(res.ErrorReason)))
	case OutcomeFlagged:
		l.Info("drift flagged", zap.String("reason", res.Reason), zap.Any("drift", kindsOf(res.Plan)))
	case OutcomeSynced:
		l.Info("synced", zap.Strings("actions", res.Actions))
	default:
		l.Debug("in sync")
	}
}

func kindsOf(p *plan.Plan) []plan.DriftKind {
	if p == nil {
		return nil
	}
	return p.Kinds()
}

func (r *Reconciler) reconcile(ctx context.Context, t Target, fast bool) (Result, *notice) {
	st := r.state(t.Name.String())
	if fast && !r.lost.has(t.Name.String()) { // an unknown write is resolved by a full reconcile's read
		if res, ok := r.fastPath(ctx, st, t); ok {
			return res, nil
		}
	}
	res, recs := r.reconcileFull(ctx, st, t)
	r.remember(st, t, &res, recs)
	return res, recs.notice
}

// records are the catalog records a full reconcile read: before is the
// latest read before deciding, after the one that confirmed the verdict.
// repeatable is set when the verdict was decided from the two sides read
// alone (decision.repeatable), so that it holds while neither changes.
type records struct {
	before, after *plan.Record
	repeatable    bool
	// notice is what the last attempt read, for the Notifier (notice.go).
	notice *notice
}

// reconcileFull re-reads both sides of the table (load), compares them and
// decides what the difference calls for (decide), and writes it (apply);
// the Result is built from what the three returned (result). An etag
// conflict while writing starts again from load, up to MaxAttempts.
func (r *Reconciler) reconcileFull(ctx context.Context, st *tableState, t Target) (Result, records) {
	var uniform *plan.UniformDrift // read-only drift of the last plan made (noteUniform)
	var recs records
	for attempt := 1; ; attempt++ {
		seen, err := r.load(ctx, st, t, attempt)
		end := func(res Result) (Result, records) {
			recs.notice = noticeOf(&seen)
			return res, recs
		}
		if err != nil {
			return end(result(t, attempt, &seen, nil, nil, err, uniform))
		}
		r.resolvePending(ctx, t.Name, &seen.rec)
		recs = records{before: &seen.rec}
		d := r.decide(t, &seen)
		uniform = d.uniform
		if d.held != "" && !r.opts.DryRun {
			r.auditHeld(ctx, d.write, d.plan.Changes(), seen.logVersion, d.reason)
		}
		if d.verdict != verdictWrite {
			if d.plan == nil && d.verdict == verdictInSync {
				recs.after = &seen.rec // in sync as read
			}
			recs.repeatable = d.repeatable && d.err == nil
			return end(result(t, attempt, &seen, &d, nil, d.err, uniform))
		}
		a, err := r.apply(ctx, t, &seen, d.write, d.plan.Changes(), attempt)
		if errors.Is(err, errRetry) {
			continue
		}
		if err == nil {
			recs.after = a.after
		}
		return end(result(t, attempt, &seen, &d, &a, err, uniform))
	}
}

// result is a full reconcile's Result, built once from what its last
// attempt observed (load), decided (decide; nil when load failed) and
// applied (apply; nil when nothing was sent), and the error that ended it.
func result(t Target, attempt int, seen *observed, d *decision, a *applied, err error, uniform *plan.UniformDrift) Result {
	res := Result{Table: t.Name.String(), Mode: t.Mode, Attempts: attempt,
		Type: seen.rec.Type, TableID: seen.rec.ID, Etag: seen.rec.Etag, CatalogVersion: seen.catalogVersion(), LogVersion: seen.logVersion}
	if d != nil {
		res.Plan, res.Write, res.Refused, res.Held = d.plan, d.write, d.refused, d.held
		switch d.verdict {
		case verdictInSync:
			res.Outcome, res.Status = OutcomeUnchanged, StatusSynced
		case verdictFlag:
			res.Outcome, res.Status, res.Reason, res.ErrorReason = OutcomeFlagged, d.status, d.reason, d.errorReason
		case verdictWrite:
			res.Outcome, res.Status = OutcomeSynced, StatusSynced
		}
	}
	if a != nil {
		res.Write, res.Refused, res.NotApplied = a.write, a.refused, a.notApplied
		if a.after != nil {
			res.CatalogVersion = a.after.LastCommitVersion
		}
		if a.left != nil {
			res.Plan = a.left
		}
	}
	if res.Write != nil {
		res.Actions = res.Write.Actions
	}
	if err != nil {
		res.fail(err)
	} else if d != nil && d.verdict == verdictDryRun {
		res.Outcome, res.Status, res.WouldUpdate = OutcomeFlagged, StatusOutOfSync, true
		res.Reason = whyDryRun + strings.Join(res.Actions, ", ")
	}
	noteUniform(&res, uniform)
	return res
}

// observed is what load read of a table: its catalog record and its log.
// When load fails, what it had read is kept for the report: the record
// (if it was read) and logVersion (if the log was).
type observed struct {
	rec plan.Record
	// read is the record as the kind read it (its own answer with it):
	// what its write is prepared from.
	read       *catalog.Read
	log        plan.LogState
	logVersion *int64
}

// catalogVersion is the version the catalog records for the table: its
// watermark, or for a catalog-managed table the latest it ratified.
func (o *observed) catalogVersion() *int64 {
	if o.rec.Managed() && o.rec.LatestTableVersion != nil {
		return o.rec.LatestTableVersion
	}
	return o.rec.LastCommitVersion
}

// load reads the table's catalog record and then its log at the record's
// location, and classifies every error it returns (see problem).
func (r *Reconciler) load(ctx context.Context, st *tableState, t Target, attempt int) (observed, error) {
	var seen observed
	from := t.Listed
	if attempt != 1 {
		from = nil // after a conflict nothing the listing carried stands for the record
	}
	read, err := r.kind.Load(ctx, t.Name, from)
	if err != nil {
		var p *problem
		switch {
		case errors.As(err, &p):
			return seen, err
		case errors.Is(err, catalog.ErrNotDelta), errors.Is(err, catalog.ErrUnsupported):
			return seen, flagged(ReasonUnsupported, err)
		}
		return seen, failed(ReasonCatalog, err)
	}
	rec := read.Record
	seen.rec, seen.read = rec, read
	_, _ = rec.ColumnsAsLog() // rendered once here for readLog, the check below and Diff
	prevID := previousID(st, &rec)
	log, err := r.readLog(ctx, st, rec, false)
	if err == nil && log.SchemaElided() && !log.SchemaIsCatalogs(&rec) {
		// The cached snapshot knows its schema by digest only, and the
		// catalog's columns are not it (drift, or a writer spelling the
		// schema unlike the catalog): read the log's schema itself.
		log, err = r.readLog(ctx, st, rec, true)
	}
	// A catalog-managed log under a plain record is flagged as such
	// (catalogManagedLog), however far its published log lags.
	if err == nil && !rec.Managed() && log.CatalogManagedFeature() == "" && rec.LastCommitVersion != nil && *rec.LastCommitVersion > log.Version {
		// Someone recorded a newer version than we see: re-read the
		// log from scratch rather than push an older snapshot, and
		// sync it only if it is another table (recreated.go).
		log, err = r.readLog(ctx, st, rec, true)
		if err == nil && *rec.LastCommitVersion > log.Version {
			if log.Recreated, err = behindLog(&rec, &log, prevID); err != nil {
				seen.logVersion = versionOf(log)
				return seen, err
			}
		}
	}
	if err != nil {
		if p := refused(err); p != nil {
			return seen, p
		}
		if errors.Is(err, deltalog.ErrNotATable) {
			return seen, orphaned(rec.Location, err)
		}
		if isLogContentError(err) {
			return seen, flagged(ReasonLog, fmt.Errorf("log cannot be read: %w", err))
		}
		return seen, failed(ReasonStorage, err)
	}
	seen.log, seen.logVersion = log, versionOf(log)
	if rec.LastCommitVersion == nil || *rec.LastCommitVersion <= log.Version {
		st.describedID = log.TableID
	}
	return seen, nil
}

// versionOf returns a pointer to a copy of log's version. &log.Version
// would keep the whole LogState (its schema string, properties and
// clustering) alive for as long as the Result, and the table's status
// keeps the Result's version until the next full read.
func versionOf(log plan.LogState) *int64 {
	v := log.Version
	return &v
}

// decide compares the two sides seen and says what the difference calls
// for: nothing (in sync, or the drift needs no action), a flag and why, or
// the updates to write (in a dry run, to report as what would be written,
// or as what the catalog would refuse).
func (r *Reconciler) decide(t Target, seen *observed) decision {
	pl, chk := r.diff(seen.log, seen.read)
	d := decision{uniform: pl.Uniform}
	if !pl.Empty() {
		d.plan = &pl
	}
	if ru, ok := catalogManagedLog(&seen.rec, &seen.log); ok {
		d.ruling, d.repeatable = ru, true
		return d
	}
	if pl.Empty() {
		d.verdict = verdictInSync
		return d
	}
	if d.ruling = policy(t, &seen.rec, pl, chk.ReadOnly != ""); d.verdict != verdictWrite {
		d.repeatable = true // the policy's verdict on what was read
		return d
	}
	if r.holdWatermark(&seen.rec, &pl) {
		d.verdict = verdictInSync // watermark_updates holds it back
		return d
	}
	// The write the kind would send (also what a dry run reports, a
	// saved plan keeps and a hold audits); a record the kind cannot
	// write is flagged as the write would be.
	d.write, d.err = r.prepare(seen, pl.Edit(seen.log))
	if d.err != nil && !r.opts.DryRun {
		d.ruling = ruling{verdict: verdictFlag} // the problem says why
		return d
	}
	if held := pl.Destructive(); len(held) > 0 && r.opts.Selector.OnDestructive(t.Name.Catalog, t.Name.Schema, t.Name.Table) == OnDestructiveHold {
		d.ruling, d.held = flagDrift(StatusOutOfSync, "", "%s", whyHeld(held)), HeldDestructive
		return d
	}
	if r.opts.DryRun {
		d.verdict = verdictDryRun
		if d.err == nil {
			if rf := r.kind.Preflight(d.write); rf != nil {
				d.refused, d.err = rf, refusedProblem(*rf)
			}
		}
	}
	return d
}

// diff compares the log with the record read: the plan (sync/plan), with
// what the kind says "true to the log" means in it (catalog.Check).
func (r *Reconciler) diff(log plan.LogState, read *catalog.Read) (plan.Plan, catalog.Check) {
	p := plan.Diff(log, read.Record, r.opts.Diff)
	chk := r.kind.Check(log, read)
	if chk.AnyType {
		p.Unsupported = nil
	}
	if len(chk.Unsupported) > 0 {
		p.Unsupported = append(p.Unsupported, chk.Unsupported...)
		sort.Strings(p.Unsupported)
	}
	if chk.Schema != "" && p.Schema == nil && len(p.Problems) == 0 {
		p.Schema = &plan.SchemaChange{Log: read.Columns, Catalog: read.Columns, Details: []string{chk.Schema}}
	}
	return p, chk
}

// prepare is the kind's write for edit, from the record seen; a record
// the kind cannot hold the log's state in is flagged.
func (r *Reconciler) prepare(seen *observed, edit *catalog.Edit) (*catalog.Write, error) {
	w, err := r.kind.Prepare(seen.read, seen.log, edit)
	switch {
	case errors.Is(err, catalog.ErrUnsupported):
		return nil, flagged(ReasonUnsupported, fmt.Errorf("table %s: %w", seen.rec.Name, err))
	case err != nil:
		return nil, failed(ReasonInternal, fmt.Errorf("table %s: preparing the write: %w", seen.rec.Name, err))
	}
	return w, nil
}

// policy says what a non-empty plan calls for: write it, nothing (the
// drift needs no action), or flag it, and why. readOnly is set for a
// catalog without the Delta API (the Unity Catalog kind, catalog/uc).
func policy(t Target, rec *plan.Record, p plan.Plan, readOnly bool) ruling {
	switch {
	case len(p.Problems) > 0:
		return flagDrift(StatusUnknown, ReasonLog, "cannot compare: %s", strings.Join(p.Problems, "; "))
	case len(p.Unsupported) > 0:
		return flagDrift(StatusOutOfSync, ReasonUnsupported, "log has types the catalog cannot store: %s", strings.Join(p.Unsupported, ", "))
	case p.Location != nil:
		return flagDrift(StatusOutOfSync, "", "location differs: %s vs %s", p.Location.Log, p.Location.Catalog)
	case !p.MetadataDrift() && (readOnly || rec.Managed() || t.Mode == ModeWarn):
		return ruling{verdict: verdictInSync}
	case readOnly:
		return flagDrift(StatusOutOfSync, "", whyReadOnly)
	case rec.Managed():
		return flagDrift(StatusOutOfSync, "", whyManaged)
	case t.Mode == ModeWarn:
		return flagDrift(StatusOutOfSync, "", whyWarn)
	}
	return ruling{verdict: verdictWrite}
}

// errRetry is apply's answer when another writer changed the table first
// and the reconcile may start again from load.
var errRetry = errors.New("etag conflict: reload and replan")

// applied is what apply did: the updates it sent (fewer than planned when
// the catalog refused one action and the rest was resent), whether they
// were not applied, the catalog's refusal, the record it read again to
// confirm them, and the difference left after it when that is reported.
type applied struct {
	write      *catalog.Write
	changes    []plan.Change // the plan's, for the audit trail
	notApplied bool
	refused    *catalog.Refusal
	after      *plan.Record
	left       *plan.Plan
	// wrote is the etag the write left on the record when it is the
	// write's own (catalog.Sent.Own), "" otherwise.
	wrote string
}

// apply sends updates in one write guarded by the record as read (Unity
// Catalog: one updateTable asserting the record's uuid and etag; see
// catalogKind.write), then reads the record again to confirm the plan
// left nothing behind. It returns what it did and re-read, with errRetry
// after a conflict while attempts remain, or a classified error.
func (r *Reconciler) apply(ctx context.Context, t Target, seen *observed, w *catalog.Write, changes []plan.Change, attempt int) (applied, error) {
	a := applied{write: w, changes: changes}
	rec := &seen.rec
	l := r.logger(ctx).With(zap.String("table", t.Name.String()))
	l.Info("sending update", zap.String("etag", rec.Etag), zap.Int64("version", seen.log.Version), zap.Strings("actions", w.Actions))
	sent, err := r.send(ctx, w, changes, seen.logVersion)
	if err != nil {
		if !errors.Is(err, catalog.ErrConflict) {
			a.notApplied = true
			return a, r.writeFailed(ctx, t, seen, &a, err)
		}
		r.opts.Metrics.RecordError(string(ReasonConflict))
		if attempt < r.opts.MaxAttempts {
			l.Info("etag conflict: another writer changed the table; reloading", zap.Int("attempt", attempt))
			return a, errRetry
		}
		a.notApplied = true
		return a, failed(ReasonConflict, fmt.Errorf("gave up after %d etag conflicts: %w", attempt, err))
	}
	if sent.Own {
		a.wrote = sent.Etag
	}
	left, err := r.reread(ctx, t.Name, seen.log, &a)
	if err != nil {
		return a, failed(ReasonCatalog, fmt.Errorf("update sent but reload failed: %w", err))
	}
	if !left.Empty() {
		a.left = &left
		if a.wrote != "" && a.after.Etag == a.wrote {
			// The record is as the write left it, and still differs: the
			// catalog did not store what it was sent.
			return a, failed(ReasonInternal, fmt.Errorf("update sent but the catalog still differs in %v", left.Kinds()))
		}
		// Another writer changed the record after the write (its etag
		// moved on): reload and re-plan, as after a conflict.
		r.opts.Metrics.RecordError(string(ReasonConflict))
		if attempt < r.opts.MaxAttempts {
			l.Info("the record changed again after the update; reloading", zap.Int("attempt", attempt), zap.Any("differs", left.Kinds()))
			return a, errRetry
		}
		return a, failed(ReasonConflict, fmt.Errorf("update sent, but after %d attempts the catalog still differs in %v: another writer keeps changing the table", attempt, left.Kinds()))
	}
	return a, nil
}

// reread reads the record again after an update (noting it on a) and
// returns what still differs from the log.
func (r *Reconciler) reread(ctx context.Context, name catalog.TableName, log plan.LogState, a *applied) (plan.Plan, error) {
	read, err := r.kind.Load(ctx, name, nil)
	if err != nil {
		return plan.Plan{}, err
	}
	a.after = &read.Record
	p, _ := r.diff(log, read)
	return p, nil
}
