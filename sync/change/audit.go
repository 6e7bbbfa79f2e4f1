package change

import (
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

// AuditWrite is what one write (sent, refused or held) was: AuditOf
// makes it from the write.
type AuditWrite struct {
	// Cycle is the cycle the write was made in (nil: none, apply).
	Cycle      *int64
	table      string
	tableID    string
	etagBefore string
	actions    []string
	changes    []plan.Change
	logVersion *int64
	// Resolves is the time of the unknown record this one resolves.
	Resolves string
}

// WriteOutcome classifies an answer for the audit trail: synced, refused
// (a moved etag or uuid (409), a table gone (404) and a refusal
// (catalog.ErrRefused, the pre-flight check's too) left the record as it
// was) or, for anything else (see unsure), unknown until the record is
// read again (resolve.go).
func WriteOutcome(err error) audit.Outcome {
	switch {
	case err == nil:
		return audit.OutcomeSynced
	case Unsure(err):
		return audit.OutcomeUnknown
	}
	return audit.OutcomeRefused
}

// Record writes one audit record: outcome, the etag after (of a synced
// write) and why (reason: for anything but synced, and for a synced write
// whose answer was lost). It returns the writer's error, which callers log: a full disk
// does not stop a sync.
func (a *AuditOptions) Record(now time.Time, w AuditWrite, outcome audit.Outcome, etagAfter *string, reason string) error {
	if a == nil || a.Writer == nil {
		return nil
	}
	rec := audit.Record{Time: now, Cycle: w.Cycle, Command: a.Command, Table: w.table, TableID: w.tableID,
		EtagBefore: w.etagBefore, EtagAfter: etagAfter, Outcome: outcome, Actions: w.actions,
		Reason: reason, Resolves: w.Resolves, LogVersion: w.logVersion, DeltasyncVersion: a.Version}
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

// ChangesSent keeps the changes that a write's actions carry: a resend
// without a refused action (write.go) did not carry its changes.
func ChangesSent(changes []plan.Change, actions []string) []plan.Change {
	sent := map[string]bool{}
	for _, a := range actions {
		sent[a] = true
	}
	var out []plan.Change
	for _, c := range changes {
		if sent[changeAction(c)] {
			out = append(out, c)
		}
	}
	return out
}

// AuditOf is the audit record's part a write decides: the one place a
// write becomes an audit record.
func AuditOf(w *catalog.Write, changes []plan.Change, logVersion *int64) AuditWrite {
	return AuditWrite{table: w.Table.String(), tableID: w.TableID, etagBefore: w.Etag, actions: w.Actions,
		changes: changes, logVersion: logVersion}
}
