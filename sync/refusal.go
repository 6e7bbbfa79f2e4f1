package sync

import (
	"errors"
	"fmt"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/change"
)

// DefaultRefusalBackoff is 1h doubling up to 12h: a refused update is not
// resent every cycle, nor every step of the failure backoff. A fix
// (a new commit that renames the column, a shorter property, an excluded
// table) is picked up when the wait ends, or at once by `deltasync once`.
func DefaultRefusalBackoff() Backoff { return Backoff{Initial: time.Hour, Max: 12 * time.Hour} }

// writeFailed classifies a write's error other than a conflict: a
// refusal flags the table (ReasonRefused) and returns the catalog's
// answer; a record the kind cannot write flags it as unsupported;
// anything else fails it (ReasonCatalog, retried with Backoff).
func writeFailed(err error) (*catalog.Refusal, error) {
	var p *problem
	switch {
	case errors.As(err, &p):
		return nil, err
	case errors.Is(err, catalog.ErrUnsupported):
		return nil, flagged(ReasonUnsupported, err)
	}
	rf, ok := catalog.AsRefusal(err)
	if !ok {
		return nil, failed(ReasonCatalog, err)
	}
	return &rf, refusedProblem(rf)
}

// refusedProblem is the problem a refused table is flagged with.
func refusedProblem(rf catalog.Refusal) *problem {
	return &problem{outcome: OutcomeFlagged, reason: ReasonRefused, err: fmt.Errorf("%s", change.RefusalText(rf))}
}
