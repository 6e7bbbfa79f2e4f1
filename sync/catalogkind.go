package sync

import (
	"context"
	"errors"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
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
	preflight(updates []uc.Update) (*catalog.Refusal, error)
	// saved is what a saved plan keeps of the write the kind would make
	// from seen besides its Delta API updates (nil, nil: nothing, the
	// updates are the write), or why the write cannot be made.
	saved(seen *observed) (*SavedWrite, error)

	// What adoption (adopt.go) asks of the catalog.
	//
	// schemasOf lists the schemas of cat, lower-cased (nil, nil: cat does
	// not exist).
	schemasOf(ctx context.Context, cat string) (map[string]bool, error)
	// tablesOf hands fn each page of cat.schema's tables: name and
	// location (StorageLocation, "" when it records none).
	tablesOf(ctx context.Context, cat, schema string, fn func([]uc.TableInfo) error) error
	// registration is what registering the snapshot at location would
	// create (the plan row is made from it), or why it cannot be.
	registration(s *deltalog.Snapshot, name catalog.TableName, location string) (uc.CreateTableRequest, error)
	// createSchema creates name's schema (one that exists is no error).
	createSchema(ctx context.Context, name catalog.TableName) error
	// register creates the table of req, in sync with s (its watermark s's
	// version), and returns the version it records; a name taken meanwhile
	// at the same location is a *registeredMeanwhile.
	register(ctx context.Context, s *deltalog.Snapshot, name catalog.TableName, req uc.CreateTableRequest) (*int64, error)
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
	req := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: seen.rec.ID}, uc.AssertEtag{Etag: seen.rec.Etag}},
		Updates:      a.updates,
	}
	lt, err := k.r.updateTable(ctx, t.Name, req, a.changes, seen.logVersion)
	if err == nil && lt != nil {
		a.wrote = lt.Metadata.Etag
	}
	return err
}

func (ucKind) isConflict(err error) bool { return errors.Is(err, catalog.ErrConflict) }

func (k ucKind) writeFailed(ctx context.Context, t Target, seen *observed, a *applied, err error) error {
	return k.r.refusedOrSplit(ctx, t, seen, a, err)
}

func (k ucKind) preflight(updates []uc.Update) (*catalog.Refusal, error) {
	return k.r.preflight(updates)
}

func (ucKind) saved(*observed) (*SavedWrite, error) { return nil, nil }

func (k ucKind) schemasOf(ctx context.Context, cat string) (map[string]bool, error) {
	ss, err := k.r.opts.Catalog.ListSchemas(ctx, cat)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, s := range ss {
		m[strings.ToLower(s.Name)] = true
	}
	return m, nil
}

func (k ucKind) tablesOf(ctx context.Context, cat, schema string, fn func([]uc.TableInfo) error) error {
	return k.r.opts.Catalog.ListTablesPages(ctx, cat, schema, fn)
}

func (ucKind) registration(s *deltalog.Snapshot, name catalog.TableName, location string) (uc.CreateTableRequest, error) {
	return RegistrationFor(s, name, location)
}

func (k ucKind) createSchema(ctx context.Context, name catalog.TableName) error {
	_, err := k.r.opts.Catalog.CreateSchema(ctx, uc.CreateSchemaRequest{Name: name.Schema, CatalogName: name.Catalog})
	if uc.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (k ucKind) register(ctx context.Context, s *deltalog.Snapshot, name catalog.TableName, req uc.CreateTableRequest) (*int64, error) {
	out, err := k.r.register(ctx, s, name, req)
	if err != nil {
		return nil, err
	}
	return out.Metadata.LastCommitVersion, nil
}
