package sync

import (
	"slices"
	"testing"

	"github.com/deltasync/deltasync/sync/metrics"
)

// The series deltasync_syncs_total starts with, one per outcome of a
// reconcile: every Outcome a reconcile ends with is one of them.
func TestMetricsKnowEveryOutcome(t *testing.T) {
	want := []string{string(OutcomeUnchanged), string(OutcomeSynced), string(OutcomeFlagged), string(OutcomeFailed)}
	if !slices.Equal(metrics.Outcomes, want) {
		t.Errorf("metrics.Outcomes = %v, want the reconcile's outcomes %v", metrics.Outcomes, want)
	}
}
