package sync

import (
	"context"
	"errors"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
)

// Target is one table a cycle reconciles.
type Target struct {
	Name catalog.TableName
	Mode Mode
	// Listed is the table's record in this cycle's listing (columns not
	// decoded), or nil. With it an unchanged table can be confirmed without
	// a per-table catalog request (see Options.ResyncInterval); without it
	// the table is always fully re-read.
	Listed *catalog.TableInfo
}

// Result is what one reconcile found and did.
type Result struct {
	Table          string      `json:"table"`
	Type           string      `json:"table_type,omitempty"`
	Mode           Mode        `json:"mode"`
	Outcome        Outcome     `json:"outcome"`
	Status         Status      `json:"sync_status"`
	Reason         string      `json:"reason,omitempty"`
	ErrorReason    ErrorReason `json:"error_reason,omitempty"`
	Plan           *Plan       `json:"diff,omitempty"`
	Actions        []string    `json:"actions,omitempty"` // update actions sent (or, in a dry run, that would be)
	LogVersion     *int64      `json:"log_version,omitempty"`
	CatalogVersion *int64      `json:"catalog_version,omitempty"`
	Attempts       int         `json:"attempts,omitempty"`
	// WouldUpdate is set by a dry run for drift that a real run would sync.
	WouldUpdate bool `json:"would_update,omitempty"`
	// NotApplied is set when the update carrying Actions failed, so the
	// catalog record was not changed.
	NotApplied bool `json:"not_applied,omitempty"`
	// Updates are the typed actions behind Actions.
	Updates []catalog.Update `json:"-"`
}

// Reconcile brings one table's catalog record in line with its log, or
// flags why it cannot. It is level-based: both sides are re-read every time.
// Cancelling ctx does not interrupt it at once; it runs to completion
// within Options.TableTimeout, and within Options.ShutdownDrain of ctx
// being cancelled.
func (r *Reconciler) Reconcile(ctx context.Context, t Target) Result {
	defer r.opts.Events.enter(t)()
	ctx, cancel := tableContext(ctx, r.opts.TableTimeout, r.opts.ShutdownDrain)
	defer cancel()
	res := r.reconcile(ctx, t)
	r.record(res)
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
	return res
}

func kindsOf(p *Plan) []Kind {
	if p == nil {
		return nil
	}
	return p.Kinds()
}

func (r *Reconciler) reconcile(ctx context.Context, t Target) Result {
	st := r.state(t.Name.String())
	if res, ok := r.unchanged(ctx, st, t); ok {
		return res
	}
	var recs records
	res := r.reconcileFull(ctx, st, t, &recs)
	r.remember(st, t, &res, recs.before, recs.after)
	return res
}

// records are the catalog records a full reconcile read: before is the
// latest read before deciding, after the one that confirmed the verdict.
type records struct{ before, after *Record }

// reconcileFull re-reads both sides of the table and acts on the difference.
func (r *Reconciler) reconcileFull(ctx context.Context, st *tableState, t Target, recs *records) Result {
	name := t.Name.String()
	res := Result{Table: name, Mode: t.Mode}
	l := r.logger(ctx).With(zap.String("table", name))
	fail := func(reason ErrorReason, err error) Result {
		res.Outcome, res.Status, res.ErrorReason, res.Reason = OutcomeFailed, StatusUnknown, reason, err.Error()
		return res
	}
	for attempt := 1; ; attempt++ {
		res.Attempts = attempt
		rec, err := r.loadRecord(ctx, t.Name, t.Listed)
		if err != nil {
			if catalog.IsUnsupportedFormat(err) {
				res.Outcome, res.Status, res.Reason = OutcomeFlagged, StatusUnknown, "not a Delta table: "+err.Error()
				res.ErrorReason = ReasonUnsupported
				return res
			}
			return fail(ReasonCatalog, err)
		}
		recs.before, recs.after = &rec, nil
		md := rec.Table.Metadata
		res.Type = md.TableType
		res.CatalogVersion = md.LastCommitVersion
		if rec.Managed() && rec.Table.LatestTableVersion != nil {
			res.CatalogVersion = rec.Table.LatestTableVersion
		}
		log, err := r.readLog(ctx, st, rec, false)
		if err == nil && !rec.Managed() && md.LastCommitVersion != nil && *md.LastCommitVersion > log.Version {
			// Someone recorded a newer version than we see: re-read the
			// log from scratch rather than push an older snapshot.
			log, err = r.readLog(ctx, st, rec, true)
			if err == nil && *md.LastCommitVersion > log.Version {
				res.LogVersion = &log.Version
				return fail(ReasonConflict, errors.New(errorf(
					"catalog records log version %d but the log's latest is %d; not pushing an older snapshot",
					*md.LastCommitVersion, log.Version)))
			}
		}
		if err != nil {
			if refused(&res, err) {
				return res
			}
			if isLogContentError(err) {
				res.Outcome, res.Status, res.ErrorReason = OutcomeFlagged, StatusUnknown, ReasonLog
				res.Reason = "log cannot be read: " + err.Error()
				return res
			}
			return fail(ReasonStorage, err)
		}
		res.LogVersion = &log.Version
		plan := Diff(log, rec, r.opts.Diff)
		if plan.Empty() {
			res.Outcome, res.Status, res.Plan = OutcomeUnchanged, StatusSynced, nil
			recs.after = &rec
			return res
		}
		res.Plan = &plan
		if why, reason, status := r.watchOnly(t, &rec, plan); why != "" {
			if why == inSync {
				res.Outcome, res.Status = OutcomeUnchanged, StatusSynced
				return res
			}
			res.Outcome, res.Status, res.Reason, res.ErrorReason = OutcomeFlagged, status, why, reason
			return res
		}
		res.Updates = plan.Updates(log)
		res.Actions = actionNames(res.Updates)
		if r.opts.DryRun {
			res.Outcome, res.Status, res.WouldUpdate = OutcomeFlagged, StatusOutOfSync, true
			res.Reason = "dry run: would send " + strings.Join(res.Actions, ", ")
			return res
		}
		req := catalog.UpdateTableRequest{
			Requirements: []catalog.Requirement{catalog.AssertTableUUID{UUID: md.TableUUID}, catalog.AssertEtag{Etag: md.Etag}},
			Updates:      res.Updates,
		}
		l.Info("sending update", zap.String("etag", md.Etag), zap.Int64("version", log.Version), zap.Strings("actions", res.Actions))
		if _, err := r.opts.Catalog.UpdateTable(ctx, t.Name, req); err != nil {
			if catalog.IsConflict(err) {
				r.opts.Metrics.recordError(ReasonConflict)
				if attempt < r.opts.MaxAttempts {
					l.Info("etag conflict: another writer changed the table; reloading", zap.Int("attempt", attempt))
					continue
				}
				res.NotApplied = true
				return fail(ReasonConflict, errors.New(errorf("gave up after %d etag conflicts: %v", attempt, err)))
			}
			res.NotApplied = true
			return fail(ReasonCatalog, err)
		}
		after, err := r.loadRecord(ctx, t.Name, nil)
		if err != nil {
			return fail(ReasonCatalog, errors.New("update sent but reload failed: "+err.Error()))
		}
		res.CatalogVersion = after.Table.Metadata.LastCommitVersion
		if left := Diff(log, after, r.opts.Diff); !left.Empty() {
			res.Plan = &left
			return fail(ReasonInternal, errors.New(errorf("update sent but the catalog still differs in %v", left.Kinds())))
		}
		res.Outcome, res.Status = OutcomeSynced, StatusSynced
		recs.after = &after
		return res
	}
}

// inSync marks drift that needs no action for this table (a watch-only
// table whose watermark merely lags).
const inSync = "\x00in-sync"

// watchOnly decides whether a non-empty plan may be written. It returns ""
// when it may, inSync when nothing needs doing, or why it is only flagged.
func (r *Reconciler) watchOnly(t Target, rec *Record, p Plan) (string, ErrorReason, Status) {
	switch {
	case len(p.Problems) > 0:
		return "cannot compare: " + strings.Join(p.Problems, "; "), ReasonLog, StatusUnknown
	case len(p.Unsupported) > 0:
		return "log has types the catalog cannot store: " + strings.Join(p.Unsupported, ", "), ReasonUnsupported, StatusOutOfSync
	case p.Location != nil:
		return errorf("location differs: %s vs %s", p.Location.Log, p.Location.Catalog), "", StatusOutOfSync
	case !p.MetadataDrift() && (rec.Managed() || t.Mode == ModeWarn):
		return inSync, "", StatusSynced
	case rec.Managed():
		return "MANAGED table: watch-only, drift is flagged, never written", "", StatusOutOfSync
	case t.Mode == ModeWarn:
		return "mode warn: drift is flagged, never written", "", StatusOutOfSync
	}
	return "", "", ""
}

// loadRecord reads both catalog views of a table: the Delta API record and
// the classic TableInfo (for the comment). When the table was listed this
// cycle and the record's updated-time is the listed updated_at, nothing
// changed in between (every change advances it, §4.4): the listing's
// comment and storage location are current and GetTable is not sent.
func (r *Reconciler) loadRecord(ctx context.Context, name catalog.TableName, listed *catalog.TableInfo) (Record, error) {
	lt, err := r.opts.Catalog.LoadTable(ctx, name)
	if err != nil {
		return Record{}, err
	}
	if listed != nil && listed.UpdatedAt != 0 && lt.Metadata.UpdatedTime == listed.UpdatedAt {
		return Record{Name: name, Table: *lt, Comment: listed.Comment, StorageLocation: listed.StorageLocation}, nil
	}
	ti, err := r.opts.Catalog.GetTable(ctx, name.String())
	if err != nil {
		return Record{}, err
	}
	return Record{Name: name, Table: *lt, Comment: ti.Comment, StorageLocation: ti.StorageLocation}, nil
}
