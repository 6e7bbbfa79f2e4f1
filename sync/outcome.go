package sync

import (
	"errors"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/deltasync/deltasync/sync/register"
)

// This file holds the words a reconcile is reported in: what it did
// (Outcome), where the table stands (Status), why it failed or was flagged
// (ErrorReason and the reason phrases); the kinds of drift are
// plan.DriftKind.
// Metrics labels, the status page and the plan/once reports all use them.

// Outcome is what a reconcile did to one table.
type Outcome string

// The outcomes of a reconcile.
const (
	OutcomeUnchanged Outcome = "unchanged" // in sync, nothing sent
	OutcomeSynced    Outcome = "synced"    // one update sent and confirmed
	OutcomeFlagged   Outcome = "flagged"   // drift reported, not written (watch-only, unsupported, ...)
	OutcomeFailed    Outcome = "failed"    // could not compare or could not write
)

// Status is a table's sync status after a reconcile.
type Status string

// The sync statuses.
const (
	StatusSynced    Status = "Synced"
	StatusOutOfSync Status = "OutOfSync"
	StatusUnknown   Status = "Unknown"
)

// ErrorReason classifies a failure for deltasync_errors_total.
type ErrorReason string

// The error reasons.
const (
	ReasonCatalog     ErrorReason = "catalog"
	ReasonStorage     ErrorReason = "storage"
	ReasonLog         ErrorReason = "log"
	ReasonConflict    ErrorReason = "conflict"
	ReasonUnsupported ErrorReason = "unsupported"
	ReasonConfig      ErrorReason = "config"
	ReasonInternal    ErrorReason = "internal"
	// ReasonLocation is a location the storage policy refuses.
	ReasonLocation ErrorReason = "location"
	// ReasonRefused is a table whose update the catalog refused (or would
	// refuse: catalog.Limits): the same update gets the same answer, so it
	// is flagged, not failed, and tried again only after RefusalBackoff.
	ReasonRefused ErrorReason = "refused"
)

// The reasons a table with drift is flagged rather than written.
const (
	whyManaged  = "MANAGED table: watch-only, drift is flagged, never written"
	whyWarn     = "mode warn: drift is flagged, never written"
	whyReadOnly = "catalog has no Delta API: read-only, drift is flagged, never written"
	whyDryRun   = "dry run: would send "
)

// problem is why a table could not be compared or written: the error with
// the outcome (failed, or flagged for a problem a retry will not fix) and
// the reason it is counted under.
type problem struct {
	outcome Outcome
	reason  ErrorReason
	err     error
}

func (p *problem) Error() string { return p.err.Error() }
func (p *problem) Unwrap() error { return p.err }

// failed is a problem that fails the table (retried with backoff).
func failed(reason ErrorReason, err error) error {
	return &problem{outcome: OutcomeFailed, reason: reason, err: err}
}

// flagged is a problem that flags the table: it is reported, and retrying
// soon would not help (an unreadable log, a refused location, ...).
func flagged(reason ErrorReason, err error) error {
	return &problem{outcome: OutcomeFlagged, reason: reason, err: err}
}

// fail records err on res: a problem as classified, anything else as an
// internal failure. The status is Unknown: the comparison was not made or
// its result was not confirmed.
func (res *Result) fail(err error) Result {
	var p *problem
	var rp *register.Problem
	switch {
	case errors.As(err, &p):
	case errors.As(err, &rp):
		p = &problem{outcome: OutcomeFailed, reason: ErrorReason(rp.Reason), err: err}
		if rp.Flagged {
			p.outcome = OutcomeFlagged
		}
	default:
		p = &problem{outcome: OutcomeFailed, reason: ReasonInternal, err: err}
	}
	res.Outcome, res.Status, res.ErrorReason, res.Reason = p.outcome, StatusUnknown, p.reason, err.Error()
	if p.reason == ReasonRefused {
		res.Status = StatusOutOfSync // compared: the drift stands, the catalog will not take it
	}
	return *res
}

// verdict is what decide concludes a table calls for.
type verdict int

const (
	// verdictWrite: the plan may be written (or, in a dry run, reported
	// as what would be written).
	verdictWrite verdict = iota
	// verdictInSync: the drift needs no action for this table (a
	// watch-only table whose watermark merely lags).
	verdictInSync
	// verdictFlag: the drift is reported, never written.
	verdictFlag
	// verdictDryRun: the plan would be written; a dry run reports it.
	verdictDryRun
)

// ruling is policy's answer for one table's plan; reason, errorReason
// and status are set with verdictFlag.
type ruling struct {
	verdict     verdict
	status      Status
	reason      string
	errorReason ErrorReason
}

// flagDrift is a ruling to report the drift without writing it.
func flagDrift(status Status, errorReason ErrorReason, format string, args ...any) ruling {
	return ruling{verdict: verdictFlag, status: status, reason: fmt.Sprintf(format, args...), errorReason: errorReason}
}

// decision is decide's answer for one table: the ruling, the plan it was
// made on (nil when empty), its read-only UniForm drift, and with
// verdictWrite or verdictDryRun the write; a dry run's pre-flight check
// may refuse them (refused, err).
type decision struct {
	ruling
	plan    *plan.Plan
	uniform *plan.UniformDrift
	write   *catalog.Write
	refused *catalog.Refusal
	err     error
	// held is HeldDestructive for an update held for its destructive
	// changes (verdictFlag, updates set: what was held).
	held string
	// repeatable is set when the verdict follows from the record and the
	// log alone (the catalog-managed ruling and policy's flags and
	// leave-as-is verdicts), not from the clock (a watermark held back),
	// a hold that audits each time, or a dry run's pre-flight: while both
	// sides stay unchanged the same verdict holds (fastpath.go).
	repeatable bool
}
