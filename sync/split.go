package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// actionKind is the drift kind each metadata update action fixes.
var actionKind = map[string]plan.DriftKind{
	"set-columns":            plan.KindSchema,
	"set-partition-columns":  plan.KindPartitioning,
	"set-domain-metadata":    plan.KindClustering,
	"remove-domain-metadata": plan.KindClustering,
	"set-protocol":           plan.KindProtocol,
	"set-properties":         plan.KindProperties,
	"remove-properties":      plan.KindProperties,
	"set-table-comment":      plan.KindComment,
}

const watermarkAction = "update-metadata-snapshot-version"

// refusedOrSplit handles an updateTable refusal (err, already known not
// to be an etag conflict). When the refusal is about one action the client
// can name (catalog.RefusedAction) and other metadata actions remain, the
// update is resent without that action and without the watermark, so
// the rest still syncs; the table is flagged refused for the kind left
// out, and retried on RefusalBackoff.
//
// The watermark does not advance while a kind is left out: the record
// would claim a log version whose state (that kind) it does not hold, and
// a reader trusting the record's version, or deltasync's own check that
// it never pushes a snapshot older than the record's, would be misled.
// It advances with the first update the server takes whole.
func (r *Reconciler) refusedOrSplit(ctx context.Context, t Target, seen *observed, a *applied, err error) error {
	rf, perr := writeFailed(err)
	a.refused = rf
	if rf == nil {
		return perr
	}
	req := uc.UpdateTableRequest{Updates: a.updates}
	action := uc.RefusedAction(*rf, req)
	if action == "" {
		return perr
	}
	rf.Action = action
	if action == "set-columns" {
		if tried, serr := r.renameInSteps(ctx, t, &seen.rec, a.updates, a.changes); tried {
			return r.confirmSteps(ctx, t, seen.log, a, serr)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(a.updates), func(u uc.Update) bool {
		return u.Action() == action || u.Action() == watermarkAction
	})
	if len(rest) == 0 {
		return perr
	}
	req = uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: seen.rec.ID}, uc.AssertEtag{Etag: seen.rec.Etag}},
		Updates:      rest,
	}
	names := uc.ActionNames(rest)
	r.logger(ctx).Info("update refused; resending without the refused action and the watermark",
		zap.String("table", t.Name.String()), zap.String("refused", action), zap.Strings("actions", names))
	if _, err := r.updateTable(ctx, t.Name, req, a.changes, seen.logVersion); err != nil {
		return perr // the whole update stays not applied; the first refusal is the news
	}
	a.updates, a.notApplied = rest, false
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
		p.err, action, strings.Join(names, ", "), action, actionKind[action])
	return p
}

// confirmSteps ends a set-columns sent as rename steps: serr is the step
// the server refused (the table stays flagged with that answer), else the
// record is read again and must match the log, as after any update.
func (r *Reconciler) confirmSteps(ctx context.Context, t Target, log plan.LogState, a *applied, serr error) error {
	if serr != nil {
		var err error
		a.refused, err = writeFailed(serr)
		return err
	}
	a.refused, a.notApplied = nil, false
	left, err := r.reread(ctx, t.Name, log, a)
	if err != nil {
		return failed(ReasonCatalog, fmt.Errorf("update sent in rename steps but reload failed: %w", err))
	}
	if !left.Empty() {
		a.left = &left
		return failed(ReasonInternal, fmt.Errorf("update sent in rename steps but the catalog still differs in %v", left.Kinds()))
	}
	return nil
}
