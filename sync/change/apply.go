package change

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/plan"
)

// ApplyOptions configures Apply. Catalog is required: the catalog the
// plan was made for (SavedPlan.CheckCatalog).
type ApplyOptions struct {
	Catalog catalog.Kind
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
		res := ApplyResult{Table: t.Table, Actions: t.Actions, EtagBefore: t.Etag}
		w, err := opts.write(t, sp.CatalogKind)
		if err != nil {
			// Nothing was sent: the plan is not this catalog's to send.
			res.Outcome, res.Reason = audit.OutcomeRefused, err.Error()
			lv := t.LogVersion
			aw := AuditWrite{table: t.Table, tableID: t.TableID, etagBefore: t.Etag, actions: t.Actions, changes: t.Changes, logVersion: &lv}
			if aerr := opts.Audit.Record(now(), aw, res.Outcome, nil, res.Reason); aerr != nil {
				l.Error("audit record not written", zap.String("table", t.Table), zap.Error(aerr))
			}
			l.Warn("saved plan: table not applied", zap.String("table", t.Table), zap.String("reason", res.Reason))
			rep.Results = append(rep.Results, res)
			continue
		}
		sent, err := opts.Catalog.Send(ctx, w)
		lw := LostOf(w, sent)
		lost, err := Settle(ctx, err, &lw, func(ctx context.Context) (*plan.Record, error) {
			read, err := opts.Catalog.Load(ctx, w.Table, nil)
			if err != nil {
				return nil, err
			}
			return &read.Record, nil
		})
		res.Outcome = WriteOutcome(err)
		var etagAfter *string
		switch {
		case lost != nil:
			res.Outcome, res.Reason = lost.Outcome, lost.Why
			if lost.Outcome == audit.OutcomeSynced {
				res.EtagAfter = lost.EtagAfter
				etagAfter = &res.EtagAfter
			}
		case err == nil:
			res.EtagAfter = sent.Etag // "" on HMS 3, as a sync's audit record says
			etagAfter = &res.EtagAfter
		case errors.Is(err, catalog.ErrConflict):
			res.Reason = whyStale
			if detail := strings.TrimPrefix(err.Error(), catalog.ErrConflict.Error()); !sent.Own && detail != "" {
				res.Reason += " (" + strings.TrimPrefix(detail, ": ") + ")"
			}
		case errors.Is(err, catalog.ErrNotFound):
			res.Reason = "the table no longer exists: plan again"
		default:
			if rf, ok := catalog.AsRefusal(err); ok {
				res.Reason = RefusalText(rf)
			} else {
				res.Reason = err.Error()
			}
		}
		lv := t.LogVersion
		aw := AuditOf(w, t.Changes, &lv)
		if aerr := opts.Audit.Record(now(), aw, res.Outcome, etagAfter, res.Reason); aerr != nil {
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

// write is a saved table's write, for this catalog's kind to send.
func (opts *ApplyOptions) write(t *SavedTable, kind string) (*catalog.Write, error) {
	if opts.Catalog == nil {
		return nil, errors.New("no catalog to apply to")
	}
	if kind != opts.Catalog.Name() {
		return nil, fmt.Errorf("table %s: the plan's write is a %s's; this catalog is a %s", t.Table, KindTitle(kind), KindTitle(opts.Catalog.Name()))
	}
	return t.write(kind)
}
