package sync

import "github.com/deltasync/deltasync/sync/plan"

// noteUniform reports read-only UniForm drift on a finished reconcile:
// a table otherwise unchanged is flagged with the explanation, a synced
// one stays synced (what could be written was) but OutOfSync. A table
// already flagged or failed keeps its reason; its plan shows the drift.
func noteUniform(res *Result, u *plan.UniformDrift) {
	if u == nil {
		return
	}
	if res.Plan == nil || res.Outcome == OutcomeSynced {
		// A synced table's plan was fixed by the update: what is left
		// is the UniForm drift alone.
		res.Plan = &plan.Plan{Table: res.Table}
	}
	res.Plan.Uniform = u
	switch res.Outcome {
	case OutcomeUnchanged:
		res.Outcome, res.Status, res.Reason = OutcomeFlagged, StatusOutOfSync, u.Why
	case OutcomeSynced:
		res.Status, res.Reason = StatusOutOfSync, u.Why
	}
}
