package sync

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/plan"
)

// AuditOptions says where the audit trail goes (see sync/audit): every
// catalog write, and every write refused or held, becomes one record.
type AuditOptions struct {
	// Writer gets the records; nil: no audit trail.
	Writer *audit.Writer
	// Command is the deltasync command writing (once, run, apply).
	Command string
	// Version is deltasync's version, the records' deltasync_version.
	Version string
}

// auditWrite is what one write (sent, refused or held) was.
type auditWrite struct {
	cycle      *int64
	table      string
	tableID    string
	etagBefore string
	updates    []uc.Update
	changes    []plan.Change
	logVersion *int64
	// resolves is the time of the unknown record this one resolves.
	resolves string
}

// writeOutcome classifies an answer for the audit trail: synced, refused
// (a moved etag or uuid (409), a table gone (404) and a refusal
// (catalog.ErrRefused, the pre-flight check's too) left the record as it
// was) or, for anything else (see unsure), unknown until the record is
// read again (resolve.go).
func writeOutcome(err error) audit.Outcome {
	switch {
	case err == nil:
		return audit.OutcomeSynced
	case unsure(err):
		return audit.OutcomeUnknown
	}
	return audit.OutcomeRefused
}

// record writes one audit record: outcome, the etag after (of a synced
// write) and why (reason: for anything but synced, and for a synced write
// whose answer was lost). It returns the writer's error, which callers log: a full disk
// does not stop a sync.
func (a *AuditOptions) record(now time.Time, w auditWrite, outcome audit.Outcome, etagAfter *string, reason string) error {
	if a == nil || a.Writer == nil {
		return nil
	}
	rec := audit.Record{Time: now, Cycle: w.cycle, Command: a.Command, Table: w.table, TableID: w.tableID,
		EtagBefore: w.etagBefore, EtagAfter: etagAfter, Outcome: outcome, Actions: uc.ActionNames(w.updates),
		Reason: reason, Resolves: w.resolves, LogVersion: w.logVersion, DeltasyncVersion: a.Version}
	for _, c := range w.changes {
		rec.Changes = append(rec.Changes, auditChange(c))
	}
	return a.Writer.Write(rec)
}

// auditChange is a plan's change as the audit trail records it: the
// value a side does not have (an added field's before, a removed one's
// after) is null.
func auditChange(c plan.Change) audit.Change {
	ac := audit.Change{Kind: string(c.Kind), Field: c.Field, Op: string(c.Op), Before: c.Catalog, After: c.Log,
		Class: string(c.Class), Details: c.Details}
	switch c.Op {
	case plan.OpAdd:
		ac.Before = nil
	case plan.OpRemove:
		ac.After = nil
	}
	return ac
}

// changeAction is the update action that carries a change.
func changeAction(c plan.Change) string {
	switch c.Kind {
	case plan.KindSchema:
		return "set-columns"
	case plan.KindPartitioning:
		return "set-partition-columns"
	case plan.KindClustering:
		if c.Op == plan.OpRemove {
			return "remove-domain-metadata"
		}
		return "set-domain-metadata"
	case plan.KindProtocol:
		return "set-protocol"
	case plan.KindProperties:
		if c.Op == plan.OpRemove {
			return "remove-properties"
		}
		return "set-properties"
	case plan.KindComment:
		return "set-table-comment"
	case plan.KindVersion:
		return "update-metadata-snapshot-version"
	}
	return "" // location, UniForm: never written
}

// changesSent keeps the changes that updates carry: a resend without a
// refused action (split.go) did not carry its changes.
func changesSent(changes []plan.Change, updates []uc.Update) []plan.Change {
	sent := map[string]bool{}
	for _, u := range updates {
		sent[u.Action()] = true
	}
	var out []plan.Change
	for _, c := range changes {
		if sent[changeAction(c)] {
			out = append(out, c)
		}
	}
	return out
}

// guards returns the uuid and etag an update request asserts.
func guards(req uc.UpdateTableRequest) (uuid, etag string) {
	for _, q := range req.Requirements {
		switch v := q.(type) {
		case uc.AssertTableUUID:
			uuid = v.UUID
		case uc.AssertEtag:
			etag = v.Etag
		}
	}
	return uuid, etag
}

// updateTable sends one updateTable and writes its audit record: synced
// with the etag the catalog answered, refused with why, or — for an
// answer lost — what the record read again shows (resolve.go): a write
// the record holds is synced, and returned as if answered, with the record
// read. changes are the plan's changes; those the request carries are
// recorded.
func (r *Reconciler) updateTable(ctx context.Context, name catalog.TableName, req uc.UpdateTableRequest, changes []plan.Change, logVersion *int64) (*uc.LoadTableResponse, error) {
	lt, err := r.opts.Catalog.UpdateTable(ctx, name, req)
	uuid, etag := guards(req)
	lw := lostWrite{tableID: uuid, etagBefore: etag, etagMoves: true, updates: req.Updates}
	res, err := settle(ctx, err, &lw, func(ctx context.Context) (*plan.Record, error) {
		read, rec, err := readUC(ctx, r.opts.Catalog, name, req.Updates)
		lt = read
		return rec, err
	})
	if err != nil {
		lt = nil
	}
	r.auditWrite(ctx, name, req, changesSent(changes, req.Updates), logVersion, lt, err, res, &lw)
	return lt, err
}

// readUC reads a Unity Catalog record to resolve a lost answer: the
// Delta API's, and the classic one's comment when the write set it.
func readUC(ctx context.Context, c *uc.Client, name catalog.TableName, updates []uc.Update) (*uc.LoadTableResponse, *plan.Record, error) {
	lt, err := c.LoadTable(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	comment := ""
	for _, u := range updates {
		if _, ok := u.(uc.SetTableComment); ok {
			ti, err := c.GetTable(ctx, name.String())
			if err != nil {
				return nil, nil, err
			}
			comment = ti.Comment
		}
	}
	rec := RecordOf(name, lt, comment, "")
	return lt, &rec, nil
}

// auditWrite writes a write's audit record: from its answer (lt, err), or
// from res when the answer was lost (settle). A write still unknown is
// kept for its table's next reconcile to resolve (lw).
func (r *Reconciler) auditWrite(ctx context.Context, name catalog.TableName, req uc.UpdateTableRequest, changes []plan.Change, logVersion *int64, lt *uc.LoadTableResponse, err error, res *resolution, lw *lostWrite) {
	if r.opts.Audit.Writer == nil {
		return
	}
	uuid, etag := guards(req)
	w := auditWrite{cycle: cycleOf(ctx), table: name.String(), tableID: uuid, etagBefore: etag, updates: req.Updates,
		changes: changes, logVersion: logVersion}
	var after *string
	outcome, reason := writeOutcome(err), ""
	if err == nil && lt != nil {
		after = &lt.Metadata.Etag
	} else if err != nil {
		reason = err.Error()
	}
	if res != nil {
		outcome, reason = res.outcome, res.why
		if res.outcome == audit.OutcomeSynced {
			after = &res.etagAfter
		}
	}
	now := r.opts.Now()
	if outcome == audit.OutcomeUnknown && lw != nil {
		r.lost.put(name.String(), unresolved{w: w, lost: *lw, at: now})
	}
	if aerr := r.opts.Audit.record(now, w, outcome, after, reason); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", name.String()), zap.Error(aerr))
	}
}

// auditHeld writes the audit record of an update held for its
// destructive changes: nothing was sent.
func (r *Reconciler) auditHeld(ctx context.Context, t Target, rec *plan.Record, updates []uc.Update, changes []plan.Change, logVersion *int64, reason string) {
	if r.opts.Audit.Writer == nil {
		return
	}
	w := auditWrite{cycle: cycleOf(ctx), table: t.Name.String(), tableID: rec.ID, etagBefore: rec.Etag, updates: updates,
		changes: changes, logVersion: logVersion}
	if aerr := r.opts.Audit.record(r.opts.Now(), w, audit.OutcomeHeld, nil, reason); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", t.Name.String()), zap.Error(aerr))
	}
}

// cycleOf returns the cycle ctx is tagged with (withCycle), or nil.
func cycleOf(ctx context.Context) *int64 {
	if c, ok := ctx.Value(cycleKey{}).(int64); ok {
		return &c
	}
	return nil
}
