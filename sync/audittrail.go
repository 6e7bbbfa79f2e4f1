package sync

import (
	"errors"
	"time"

	"github.com/deltasync/deltasync/catalog"
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
	updates    []catalog.Update
	changes    []plan.Change
	logVersion *int64
}

// writeOutcome classifies an updateTable answer for the audit trail: a
// moved etag or uuid (409), a table gone (404) and a refusal
// (catalog.ErrRefused, the pre-flight check's too) left the record as it
// was; anything else may or may not have reached it.
func writeOutcome(err error) audit.Outcome {
	switch {
	case err == nil:
		return audit.OutcomeSynced
	case catalog.IsConflict(err), catalog.IsNotFound(err), errors.Is(err, catalog.ErrRefused):
		return audit.OutcomeRefused
	}
	return audit.OutcomeFailed
}

// record writes one audit record: outcome, the etag after (from the
// catalog's answer to a synced write) and why (reason, for anything but
// synced). It returns the writer's error, which callers log: a full disk
// does not stop a sync.
func (a *AuditOptions) record(now time.Time, w auditWrite, outcome audit.Outcome, etagAfter *string, reason string) error {
	if a == nil || a.Writer == nil {
		return nil
	}
	rec := audit.Record{Time: now, Cycle: w.cycle, Command: a.Command, Table: w.table, TableID: w.tableID,
		EtagBefore: w.etagBefore, EtagAfter: etagAfter, Outcome: outcome, Actions: plan.ActionNames(w.updates),
		Reason: reason, LogVersion: w.logVersion, DeltasyncVersion: a.Version}
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
