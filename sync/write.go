package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/plan"
)

// send is the one place a reconcile's write reaches the catalog: the kind
// sends w (guarded as it prepared it), an answer lost is resolved by
// reading the record again (resolve.go), and the audit record is written
// from w and what became of it. changes are the plan's; those w carries
// are recorded. A write the record read again holds is returned as sent.
func (r *Reconciler) send(ctx context.Context, w *catalog.Write, changes []plan.Change, logVersion *int64) (catalog.Sent, error) {
	sent, err := r.kind.Send(ctx, w)
	lw := change.LostOf(w, sent)
	res, err := change.Settle(ctx, err, &lw, func(ctx context.Context) (*plan.Record, error) {
		read, err := r.kind.Load(ctx, w.Table, nil)
		if err != nil {
			return nil, err
		}
		return &read.Record, nil
	})
	if res != nil && err == nil {
		sent.Etag = res.EtagAfter
	}
	r.auditSent(ctx, w, change.ChangesSent(changes, w.Actions), logVersion, sent, err, res, &lw)
	return sent, err
}

// writeFailed handles a write's error other than a conflict. A refusal
// flags the table (retried on RefusalBackoff); when the kind can still
// send part of the write (catalog.Kind.Fallback: a column rename in
// steps, or the write without the refused action and the watermark), it
// is sent, so that the rest syncs. The watermark does not advance while
// a kind of change is left out: the record would claim a log version
// whose state it does not hold.
func (r *Reconciler) writeFailed(ctx context.Context, t Target, seen *observed, a *applied, err error) error {
	rf, perr := writeFailed(err)
	a.refused = rf
	if rf == nil {
		return perr
	}
	steps := r.kind.Fallback(seen.read, seen.log, a.write.Edit, a.write, *rf)
	if len(steps) == 0 {
		return perr
	}
	if len(steps) == 1 && !slices.Contains(steps[0].Actions, catalog.ActionUpdateSnapshotVersion) {
		return r.resendRest(ctx, t, seen, a, steps[0], perr)
	}
	return r.sendSteps(ctx, t, seen, a, steps)
}

// resendRest sends rest, the write without the action the catalog
// refused and without the watermark; the table stays flagged refused
// for that action's kind.
func (r *Reconciler) resendRest(ctx context.Context, t Target, seen *observed, a *applied, rest *catalog.Write, perr error) error {
	action := ""
	for _, x := range a.write.Actions {
		if x != catalog.ActionUpdateSnapshotVersion && !slices.Contains(rest.Actions, x) {
			action = x
		}
	}
	if a.refused.Action == "" {
		a.refused.Action = action
	}
	r.logger(ctx).Info("update refused; resending without the refused action and the watermark",
		zap.String("table", t.Name.String()), zap.String("refused", action), zap.Strings("actions", rest.Actions))
	if _, err := r.send(ctx, rest, a.changes, seen.logVersion); err != nil {
		return perr // the whole update stays not applied; the first refusal is the news
	}
	a.write, a.notApplied = rest, false
	left, err := r.reread(ctx, t.Name, seen.log, a)
	if err != nil {
		return failed(ReasonCatalog, fmt.Errorf("update sent without %s but reload failed: %w", action, err))
	}
	a.left = &left
	for _, k := range left.Kinds() {
		if k != actionKind[action] && k != plan.KindVersion && k != plan.KindUniform {
			return failed(ReasonInternal, fmt.Errorf("update sent without %s but the catalog still differs in %v", action, left.Kinds()))
		}
	}
	p := perr.(*problem)
	p.err = fmt.Errorf("%w; resent without %s and the watermark: %s synced, %s stays refused (%s)",
		p.err, action, strings.Join(rest.Actions, ", "), action, actionKind[action])
	return p
}

// sendSteps sends a write the kind split into steps (a column rename at a
// time, the last step the write itself), each guarded by the etag the
// previous one left. A step refused ends it with that refusal; else the
// record is read again and must match the log, as after any update.
func (r *Reconciler) sendSteps(ctx context.Context, t Target, seen *observed, a *applied, steps []*catalog.Write) error {
	etag := a.write.Etag
	r.logger(ctx).Info("update refused; sending the column renames one at a time",
		zap.String("table", t.Name.String()), zap.Int("steps", len(steps)))
	for _, step := range steps {
		step.Etag = etag
		sent, err := r.send(ctx, step, a.changes, seen.logVersion)
		if err != nil {
			a.refused, err = writeFailed(err)
			return err
		}
		etag = sent.Etag
	}
	a.write = steps[len(steps)-1]
	a.refused, a.notApplied = nil, false
	left, err := r.reread(ctx, t.Name, seen.log, a)
	if err != nil {
		return failed(ReasonCatalog, fmt.Errorf("update sent in rename steps but reload failed: %w", err))
	}
	if !left.Empty() {
		a.left = &left
		return failed(ReasonInternal, fmt.Errorf("update sent in rename steps but the catalog still differs in %v", left.Kinds()))
	}
	return nil
}

// actionKind is the drift kind each write action fixes.
var actionKind = map[string]plan.DriftKind{
	catalog.ActionSetColumns:           plan.KindSchema,
	catalog.ActionSetPartitionColumns:  plan.KindPartitioning,
	catalog.ActionSetDomainMetadata:    plan.KindClustering,
	catalog.ActionRemoveDomainMetadata: plan.KindClustering,
	catalog.ActionSetProtocol:          plan.KindProtocol,
	catalog.ActionSetProperties:        plan.KindProperties,
	catalog.ActionRemoveProperties:     plan.KindProperties,
	catalog.ActionSetTableComment:      plan.KindComment,
}

// auditSent writes a write's audit record: from its answer (sent, err),
// or from res when the answer was lost (settle). A write still unknown is
// kept for its table's next reconcile to resolve (lw).
func (r *Reconciler) auditSent(ctx context.Context, w *catalog.Write, changes []plan.Change, logVersion *int64, sent catalog.Sent, err error, res *change.Resolution, lw *change.LostWrite) {
	if r.opts.Audit.Writer == nil {
		return
	}
	aw := change.AuditOf(w, changes, logVersion)
	aw.Cycle = cycleOf(ctx)
	var after *string
	outcome, reason := change.WriteOutcome(err), ""
	if err == nil {
		after = &sent.Etag
	} else {
		reason = err.Error()
	}
	if res != nil {
		outcome, reason = res.Outcome, res.Why
		if res.Outcome == audit.OutcomeSynced {
			after = &res.EtagAfter
		}
	}
	now := r.opts.Now()
	if outcome == audit.OutcomeUnknown && lw != nil {
		r.lost.put(w.Table.String(), unresolved{w: aw, lost: *lw, at: now})
	}
	if aerr := r.opts.Audit.Record(now, aw, outcome, after, reason); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", w.Table.String()), zap.Error(aerr))
	}
}

// auditHeld writes the audit record of a write held for its destructive
// changes: nothing was sent.
func (r *Reconciler) auditHeld(ctx context.Context, w *catalog.Write, changes []plan.Change, logVersion *int64, reason string) {
	if r.opts.Audit.Writer == nil || w == nil {
		return
	}
	aw := change.AuditOf(w, changes, logVersion)
	aw.Cycle = cycleOf(ctx)
	if aerr := r.opts.Audit.Record(r.opts.Now(), aw, audit.OutcomeHeld, nil, reason); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", w.Table.String()), zap.Error(aerr))
	}
}
