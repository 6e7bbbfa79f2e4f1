package sync

import (
	"context"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/plan"
)

// catalogKind is what one reconcile asks of the kind of catalog it keeps
// true to the logs: the seam between the one reconcile (load → decide →
// apply, fast path, policy, reports, metrics) and a catalog's own calls.
// Unity Catalog (ucKind) and the Hive Metastore (hmsKind) implement it;
// everything else a cycle does is the same code for both.
type catalogKind interface {
	// discover hands emit each selected table this shard owns, as its
	// listing arrives, and returns the listed tables that are not Delta.
	discover(ctx context.Context, emit func(Target) bool) ([]Skipped, error)
	// load reads a table's record as a plan.Record, and what the kind's
	// write needs of it (native, opaque to the reconcile). attempt is the
	// reconcile's round: after a conflict (attempt > 1) nothing the
	// cycle's listing carried may stand for the record. attempt 0 is the
	// read that confirms a write.
	load(ctx context.Context, t Target, attempt int) (rec plan.Record, native any, err error)
	// diff compares the log with the record: what "true to the log"
	// means in this kind of catalog.
	diff(log plan.LogState, rec *plan.Record, native any) plan.Plan
	// write sends updates (the plan's) guarded by the record load read,
	// and writes its audit record. Another writer having changed the
	// table since is an error isConflict reports.
	write(ctx context.Context, t Target, seen *observed, a *applied) error
	isConflict(err error) bool
	// writeFailed classifies a write's error other than a conflict (a
	// refusal flags the table; the kind may resend part of it) and
	// returns the error the reconcile ends with.
	writeFailed(ctx context.Context, t Target, seen *observed, a *applied, err error) error
	// preflight is the kind's check of updates before they are sent,
	// for a dry run (nil, nil: nothing to say).
	preflight(updates []catalog.Update) (*catalog.Refusal, error)
}

// ucKind is Unity Catalog, through its Delta API (and the classic API
// for catalogs without it, readonly.go).
type ucKind struct{ r *Reconciler }

func (k ucKind) discover(ctx context.Context, emit func(Target) bool) ([]Skipped, error) {
	return k.r.discover(ctx, emit)
}

func (k ucKind) load(ctx context.Context, t Target, attempt int) (plan.Record, any, error) {
	listed := t.Listed
	if attempt == 0 {
		listed = nil
	}
	rec, err := k.r.loadRecord(ctx, t.Name, listed)
	return rec, nil, err
}

func (k ucKind) diff(log plan.LogState, rec *plan.Record, _ any) plan.Plan {
	return plan.Diff(log, *rec, k.r.opts.Diff)
}

// write sends one updateTable guarded by the record's uuid and etag.
func (k ucKind) write(ctx context.Context, t Target, seen *observed, a *applied) error {
	req := catalog.UpdateTableRequest{
		Requirements: []catalog.Requirement{catalog.AssertTableUUID{UUID: seen.rec.ID}, catalog.AssertEtag{Etag: seen.rec.Etag}},
		Updates:      a.updates,
	}
	_, err := k.r.updateTable(ctx, t.Name, req, a.changes, seen.logVersion)
	return err
}

func (ucKind) isConflict(err error) bool { return catalog.IsConflict(err) }

func (k ucKind) writeFailed(ctx context.Context, t Target, seen *observed, a *applied, err error) error {
	return k.r.refusedOrSplit(ctx, t, seen, a, err)
}

func (k ucKind) preflight(updates []catalog.Update) (*catalog.Refusal, error) {
	return k.r.preflight(updates)
}
