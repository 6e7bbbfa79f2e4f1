package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/plan"
)

// ApplyOptions configures Apply. Catalog is required for a plan made for
// Unity Catalog, HMS for one made for a Hive Metastore.
type ApplyOptions struct {
	Catalog *uc.Client
	HMS     *HMSOptions
	Audit   AuditOptions
	Logger  *zap.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ApplyResult is what became of one table of a saved plan.
type ApplyResult struct {
	Table string `json:"table"`
	// Outcome is synced (applied), refused (stale, gone or refused by the
	// catalog: the record is as it was), or for an answer lost, what the
	// record read again showed: synced, not_applied or unknown.
	Outcome    audit.Outcome `json:"outcome"`
	Reason     string        `json:"reason,omitempty"`
	Actions    []string      `json:"actions"`
	EtagBefore string        `json:"etag_before"`
	EtagAfter  string        `json:"etag_after,omitempty"`
}

// ApplyReport is what Apply did, table by table, in the plan's order.
type ApplyReport struct {
	Results []ApplyResult
}

// Applied reports whether every table of the plan was applied.
func (r *ApplyReport) Applied() bool {
	for _, res := range r.Results {
		if res.Outcome != audit.OutcomeSynced {
			return false
		}
	}
	return true
}

// NotApplied names the tables that were not applied.
func (r *ApplyReport) NotApplied() []string {
	var out []string
	for _, res := range r.Results {
		if res.Outcome != audit.OutcomeSynced {
			out = append(out, res.Table)
		}
	}
	return out
}

// WriteText writes one line per table and a summary.
func (r *ApplyReport) WriteText(w io.Writer) error {
	var b strings.Builder
	n := 0
	for _, res := range r.Results {
		switch res.Outcome {
		case audit.OutcomeSynced:
			n++
			fmt.Fprintf(&b, "%s: applied: %s\n", res.Table, strings.Join(res.Actions, ", "))
		default:
			fmt.Fprintf(&b, "%s: %s: %s\n", res.Table, res.Outcome, res.Reason)
		}
	}
	fmt.Fprintf(&b, "deltasync: %d tables in the plan: %d applied, %d not applied\n", len(r.Results), n, len(r.Results)-n)
	_, err := io.WriteString(w, b.String())
	return err
}

// whyStale is the reason a table whose record moved since the plan is refused.
const whyStale = "stale: the record changed since the plan was made (its etag or uuid no longer match); nothing sent for it: plan again"

// Apply sends exactly a saved plan's updates: one updateTable per table,
// guarded by the uuid and etag the plan recorded (assert-table-uuid and
// assert-etag), nothing else — no reload, no re-plan, no retry after a
// 409. A plan made for a Hive Metastore sends each table's saved edit
// instead, guarded as applyHMS says. A table whose record moved since (409), that is gone (404) or
// whose update the catalog refuses is refused and the others are still
// applied. The plan must have been made for this catalog (CheckCatalog):
// the caller checks that first, and nothing is sent otherwise. Every
// table's outcome is an audit record (cycle null).
func Apply(ctx context.Context, opts ApplyOptions, sp *SavedPlan) *ApplyReport {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	l := opts.Logger
	if l == nil {
		l = zap.NewNop()
	}
	rep := &ApplyReport{}
	for i := range sp.Tables {
		t := &sp.Tables[i]
		res := ApplyResult{Table: t.Table, Actions: uc.ActionNames(t.Updates), EtagBefore: t.Etag}
		etag, err := opts.send(ctx, t)
		lw := lostWrite{tableID: t.TableID, etagBefore: t.Etag, etagMoves: t.Metastore == nil, updates: t.Updates}
		if t.Metastore != nil {
			lw.written = etag // the guard value WriteFrom set, also when its answer was lost
		}
		lost, err := settle(ctx, err, &lw, func(ctx context.Context) (*plan.Record, error) { return opts.readBack(ctx, t) })
		res.Outcome = writeOutcome(err)
		var etagAfter *string
		switch {
		case lost != nil:
			res.Outcome, res.Reason = lost.outcome, lost.why
			if lost.outcome == audit.OutcomeSynced {
				res.EtagAfter = lost.etagAfter
				etagAfter = &res.EtagAfter
			}
		case err == nil:
			res.EtagAfter = etag // "" on HMS 3, as a sync's audit record says
			etagAfter = &res.EtagAfter
		case uc.IsConflict(err), errors.Is(err, hms.ErrConflict):
			res.Reason = whyStale
			if errors.Is(err, errStaleHMS) {
				res.Reason += " (" + err.Error() + ")"
			}
		case uc.IsNotFound(err), errors.Is(err, hms.ErrNotFound):
			res.Reason = "the table no longer exists: plan again"
		default:
			if rf, ok := uc.AsRefusal(err); ok {
				res.Reason = refusalText(rf)
			} else {
				res.Reason = err.Error()
			}
		}
		lv := t.LogVersion
		w := auditWrite{table: t.Table, tableID: t.TableID, etagBefore: t.Etag, updates: t.Updates, changes: t.Changes, logVersion: &lv}
		if aerr := opts.Audit.record(now(), w, res.Outcome, etagAfter, res.Reason); aerr != nil {
			l.Error("audit record not written", zap.String("table", t.Table), zap.Error(aerr))
		}
		if err != nil {
			l.Warn("saved plan: table not applied", zap.String("table", t.Table), zap.String("etag", t.Etag), zap.String("reason", res.Reason))
		} else {
			l.Info("saved plan: applied", zap.String("table", t.Table), zap.String("etag", t.Etag), zap.Strings("actions", res.Actions))
		}
		rep.Results = append(rep.Results, res)
	}
	return rep
}

// send sends one table's saved write and returns the etag it left ("" on
// HMS 3, where the server sets transient_lastDdlTime itself).
func (opts *ApplyOptions) send(ctx context.Context, t *SavedTable) (string, error) {
	name, err := catalog.ParseTableName(t.Table)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if t.Metastore != nil {
		if opts.HMS == nil || opts.HMS.Client == nil {
			return "", fmt.Errorf("table %s: the plan's write is a Hive Metastore's; this catalog is not one", t.Table)
		}
		return applyHMS(ctx, opts.HMS, name, t, opts.now())
	}
	if opts.Catalog == nil {
		return "", fmt.Errorf("table %s: the plan's write is Unity Catalog's; this catalog is not one", t.Table)
	}
	resp, err := opts.Catalog.UpdateTable(ctx, name, t.request())
	if err != nil {
		return "", err
	}
	return resp.Metadata.Etag, nil
}

// readBack reads a saved table's record again, to resolve a write whose
// answer was lost.
func (opts *ApplyOptions) readBack(ctx context.Context, t *SavedTable) (*plan.Record, error) {
	name, err := catalog.ParseTableName(t.Table)
	if err != nil {
		return nil, err
	}
	if t.Metastore != nil {
		if opts.HMS == nil || opts.HMS.Client == nil {
			return nil, errors.New("no Hive Metastore client")
		}
		cur, err := opts.HMS.Client.GetTable(ctx, name.Schema, name.Table)
		if err != nil {
			return nil, err
		}
		rec, err := hmsRecordOf(name, cur)
		return &rec, err
	}
	if opts.Catalog == nil {
		return nil, errors.New("no Unity Catalog client")
	}
	_, rec, err := readUC(ctx, opts.Catalog, name, t.Updates)
	return rec, err
}

func (opts *ApplyOptions) now() time.Time {
	if opts.Now != nil {
		return opts.Now()
	}
	return time.Now()
}

// errStaleHMS marks a saved HMS write whose record is no longer the one
// the plan was made from (checked before anything is sent).
var errStaleHMS = fmt.Errorf("%w: stale record", hms.ErrConflict)

// applyHMS sends a saved HMS write: the table is read again (one
// get_table_req) and must still be the record the plan was made from —
// the same table (name and createTime: its table_id), the same
// transient_lastDdlTime (the etag) and the same fingerprint of every
// parameter, serde parameter and column (so an edit in the same second,
// which leaves transient_lastDdlTime as it was, is seen too); then the
// saved edit, made to that record, is written the way a sync writes
// (hms.Client.WriteFrom: the expected-parameter guard on HMS 4, the table
// lock and a re-read under it on HMS 3). Nothing is reloaded, re-planned
// or retried: a record that moved is refused as stale.
func applyHMS(ctx context.Context, o *HMSOptions, name catalog.TableName, t *SavedTable, now time.Time) (string, error) {
	want := o.Name
	if want == "" {
		want = DefaultHMSName
	}
	if !strings.EqualFold(name.Catalog, want) {
		return "", fmt.Errorf("table %s: not a table of this metastore (catalog.name %s): nothing sent", t.Table, want)
	}
	if len(t.Metastore.Columns) > 0 && o.Columns != hms.ColumnsReal {
		return "", fmt.Errorf("table %s: the plan sets the HMS columns, and catalog.columns is not real here: nothing sent", t.Table)
	}
	cur, err := o.Client.GetTable(ctx, name.Schema, name.Table)
	if err != nil {
		return "", err
	}
	switch {
	case hmsTableID(name, cur.Thrift) != t.TableID:
		return "", fmt.Errorf("%w: the table was dropped and created again (table_id %s, the plan's %s)", errStaleHMS, hmsTableID(name, cur.Thrift), t.TableID)
	case cur.Thrift.Parameters[hms.KeyDDLTime] != t.Etag:
		return "", fmt.Errorf("%w: %s is %q, the plan's %q", errStaleHMS, hms.KeyDDLTime, cur.Thrift.Parameters[hms.KeyDDLTime], t.Etag)
	case recordFingerprint(cur.Thrift) != t.RecordFingerprint:
		return "", fmt.Errorf("%w: its parameters, serde parameters or columns changed (record_fingerprint %s, the plan's %s)", errStaleHMS, recordFingerprint(cur.Thrift), t.RecordFingerprint)
	case !hms.IsDelta(cur.Thrift):
		return "", fmt.Errorf("%w: not a Delta table: %s", errStaleHMS, notDeltaHMS(cur.Thrift))
	}
	return o.Client.WriteFrom(ctx, cur, t.Metastore.ApplyTo(cur.Thrift), now, o.LockWait)
}
