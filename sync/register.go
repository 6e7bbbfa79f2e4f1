package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/register"
)

// Registration of tables found in storage is package sync/register's; this
// file is its host (storage policy, log reads, shard, tables[] rules,
// Dirty, audit) and reports its rows in the reconcile's words: each row is
// recorded as the table's status, counted, notified and logged like a
// reconcile's.

// The outcomes of registering tables found in storage (register.Outcome;
// a row a warn rule withholds is OutcomeFlagged in mode warn).
const (
	// OutcomeRegistered: the table was created, as EXTERNAL, in sync with
	// its log.
	OutcomeRegistered = Outcome(register.Registered)
	// OutcomeWouldRegister: a dry run found a table a run would register,
	// or a run reached register.Options.MaxPerCycle and it waits.
	OutcomeWouldRegister = Outcome(register.WouldRegister)
	// OutcomeAlreadyRegistered: the table's location is recorded under
	// another name; nothing is created (Reason names it).
	OutcomeAlreadyRegistered = Outcome(register.AlreadyRegistered)
	// OutcomeOrphaned: a record whose location holds no Delta log (its
	// _delta_log is gone or empty). Never deleted, never written.
	OutcomeOrphaned Outcome = "orphaned"
)

// The error reasons of registering tables found in storage.
const (
	// ReasonMissingSchema: the catalog or schema a register rule names
	// does not exist (a schema is created only with CreateSchemas).
	ReasonMissingSchema = ErrorReason(register.ReasonMissingSchema)
	// ReasonOrphaned: the record's location holds no Delta log.
	ReasonOrphaned ErrorReason = "orphaned"
)

// registerHost is what package register reads and reports through.
type registerHost struct {
	r      *Reconciler // nil when only checking the rules
	policy *StoragePolicy
}

var _ register.Host = registerHost{}

// Resolve is the storage policy's answer, classified: a refused location
// is flagged (never read).
func (h registerHost) Resolve(loc string) (location.Location, string, error) {
	l, u, err := h.policy.Resolve(loc)
	if err != nil {
		if p := refused(err); p != nil {
			return l, u, p
		}
		return l, u, flagged(ReasonLocation, err)
	}
	return l, u, nil
}

func (h registerHost) ListDirs(ctx context.Context, loc location.Location, pageSize int, page func([]string) error) error {
	return deltalog.ListDirs(ctx, h.policy.openURL(loc), pageSize, page, h.r.logOptions...)
}

// Load reads a candidate's log (one Load): deltalog.ErrNotATable as it
// is, an unreadable log flagged, storage failed.
func (h registerHost) Load(ctx context.Context, openURL, loc string) (catalog.LogState, error) {
	t, err := deltalog.Open(ctx, openURL, h.r.logOptions...)
	if err != nil {
		return catalog.LogState{}, failed(ReasonStorage, err)
	}
	defer t.Close()
	snap, err := t.Load(ctx, deltalog.LoadOptions{})
	switch {
	case err == nil:
		return LogStateOf(snap, loc), nil
	case errors.Is(err, deltalog.ErrNotATable):
		return catalog.LogState{}, err
	case isLogContentError(err):
		return catalog.LogState{}, flagged(ReasonLog, fmt.Errorf("not registered: the log cannot be read: %w", err))
	}
	return catalog.LogState{}, failed(ReasonStorage, err)
}

func (h registerHost) Owns(name string) bool { return h.r.opts.Shard.Owns(name) }

// Recorded are the locations earlier cycles read, tables outside the
// schemas a discovery lists too.
func (h registerHost) Recorded() map[string]string {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	out := make(map[string]string, len(h.r.tables))
	for name, st := range h.r.tables {
		if st.loc != "" {
			out[location.Canonical(st.loc)] = name
		}
	}
	return out
}

func (h registerHost) Warn(n catalog.TableName) bool {
	m, ok := h.r.opts.Selector.Match(n.Catalog, n.Schema, n.Table)
	return ok && m == ModeWarn
}

func (h registerHost) DryRun() bool   { return h.r.opts.DryRun }
func (h registerHost) Now() time.Time { return h.r.opts.Now() }

// Track makes a registered table known to the Dirty index, in the mode
// a tables[] rule that selects it says (else sync).
func (h registerHost) Track(n catalog.TableName, loc string) {
	mode := ModeSync
	if m, ok := h.r.opts.Selector.Match(n.Catalog, n.Schema, n.Table); ok {
		mode = m
	}
	h.r.opts.Dirty.track(Target{Name: n, Mode: mode}, loc)
}

func (h registerHost) Audit(ctx context.Context, w *catalog.Write, err error) {
	lv := w.LogVersion
	h.r.auditSent(ctx, w, nil, &lv, catalog.Sent{}, err, nil, nil)
}

// registerFound runs the register phase of a cycle when discovery is due
// and returns its rows, each already recorded as the table's status.
func (r *Reconciler) registerFound(ctx context.Context, log *zap.Logger) []Result {
	rows, found, ran := r.registrar.Discover(ctx)
	if !ran {
		return nil
	}
	out := make([]Result, 0, len(rows))
	var keep []string
	for _, row := range rows {
		res := resultOfRow(row)
		out = append(out, res)
		if r.recordRegistration(res, log) {
			keep = append(keep, res.Table)
		}
	}
	r.registrar.Keep(keep)
	r.opts.Metrics.SetDiscovered(found)
	return out
}

// resultOfRow is a register row in the reconcile's words.
func resultOfRow(row register.Row) Result {
	res := Result{Table: row.Table, Mode: ModeSync, LogVersion: row.LogVersion, CatalogVersion: row.CatalogVersion, Registration: row.Registration}
	if row.External {
		res.Type = catalog.TableTypeExternal
	}
	if row.Err != nil {
		return res.fail(row.Err)
	}
	res.Reason = row.Reason
	switch row.Outcome {
	case register.Registered, register.AlreadyRegistered:
		res.Outcome, res.Status = Outcome(row.Outcome), StatusSynced
	case register.WouldRegister:
		res.Outcome, res.Status = OutcomeWouldRegister, StatusOutOfSync
	case register.Withheld:
		res.Mode, res.Outcome, res.Status = ModeWarn, OutcomeFlagged, StatusOutOfSync
	default:
		return res.fail(fmt.Errorf("register: row of %s with outcome %q", row.Table, row.Outcome))
	}
	return res
}

// recordRegistration records a register-phase row as the table's status,
// counts and logs it; it reports whether the row stays on the status page
// until the next discovery (everything but a registration, which the
// listing keeps).
func (r *Reconciler) recordRegistration(res Result, log *zap.Logger) (keep bool) {
	r.record(res)
	r.notify(context.Background(), res, nil)
	r.opts.Metrics.RecordRegistration(string(res.Outcome))
	switch res.Outcome {
	case OutcomeRegistered:
		log.Info("registered", zap.String("table", res.Table), zap.String("location", res.Registration.Location))
	case OutcomeFlagged, OutcomeFailed:
		log.Warn("not registered", zap.String("table", res.Table), zap.String("reason", res.Reason))
	case OutcomeAlreadyRegistered:
		log.Info("not registered", zap.String("table", res.Table), zap.String("reason", res.Reason))
	}
	return res.Outcome != OutcomeRegistered
}

// RegisterCandidate reports whether root, a table root as an object event
// names it (location.ObjectRoot), lies where a register rule describes a
// table and this process has not registered it or found it recorded; name
// is the table it would be registered as (register.Registrar.Candidate).
func (r *Reconciler) RegisterCandidate(root string) (name string, ok bool) {
	return r.registrar.Candidate(root)
}

// RegisterAt decides and acts for the table at root as discovery would,
// records the row as the table's status and returns it. ok is false when
// nothing was decided: root is no candidate, or its log holds no commit
// yet (a later event or discovery finds it). A result with no Outcome
// means the table is recorded already under its name (registered meanwhile
// by discovery, or found by the catalog view): nothing to report.
func (r *Reconciler) RegisterAt(ctx context.Context, root string) (res Result, ok bool) {
	row, ok := r.registrar.At(ctx, root)
	if !ok {
		return Result{}, false
	}
	if row.Outcome == "" && row.Err == nil {
		return Result{Table: row.Table}, true
	}
	res = resultOfRow(row)
	r.recordRegistration(res, r.log.With(zap.String("source", "event")))
	return res, true
}

// orphaned is the problem of a record whose location holds no Delta log.
func orphaned(loc string, err error) error {
	return &problem{outcome: OutcomeOrphaned, reason: ReasonOrphaned,
		err: fmt.Errorf("orphaned: %s holds no Delta log; the record is never deleted, never written: %w", loc, err)}
}

// CheckRegisterOptions checks register rules against the storage policy
// as New does, without a catalog: each problem is a
// *register.TemplateError naming its rule (or an error for the options as
// a whole).
func CheckRegisterOptions(opts *register.Options, policy *StoragePolicy) error {
	_, err := register.New(opts, nil, registerHost{policy: policy})
	return err
}

// Register creates the EXTERNAL table for the snapshot in k's catalog, in
// sync with the log (its watermark the snapshot's version), and returns
// the version the record holds.
func Register(ctx context.Context, k catalog.Kind, s *deltalog.Snapshot, name catalog.TableName, location string) (*int64, error) {
	w, err := k.Registration(name, location, LogStateOf(s, location))
	if err != nil {
		return nil, err
	}
	v, err := k.Register(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return v, nil
}
