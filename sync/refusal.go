package sync

import (
	"fmt"
	"net/http"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// DefaultRefusalBackoff is 1h doubling up to 12h: a refused update is not
// resent every cycle, nor every step of the failure backoff. A fix
// (a new commit that renames the column, a shorter property, an excluded
// table) is picked up when the wait ends, or at once by `deltasync once`.
func DefaultRefusalBackoff() Backoff { return Backoff{Initial: time.Hour, Max: 12 * time.Hour} }

// writeFailed classifies an updateTable error other than an etag conflict:
// a refusal flags the table (ReasonRefused) and returns the server's
// answer; anything else fails it (ReasonCatalog, retried with Backoff).
func writeFailed(err error) (*catalog.Refusal, error) {
	rf, ok := uc.AsRefusal(err)
	if !ok {
		return nil, failed(ReasonCatalog, err)
	}
	return &rf, &problem{outcome: OutcomeFlagged, reason: ReasonRefused, err: fmt.Errorf("%s", refusalText(rf))}
}

// preflight is the catalog's own width check of updates, for a dry run:
// a plan says the update would be refused rather than that it would be
// sent.
func (r *Reconciler) preflight(updates []uc.Update) (*catalog.Refusal, error) {
	req := uc.UpdateTableRequest{Updates: updates}
	if err := r.opts.Catalog.Limits().CheckUpdate(req); err != nil {
		return writeFailed(err)
	}
	return nil, nil
}

// refusalText is the reason a refused table is reported with.
func refusalText(rf catalog.Refusal) string {
	if rf.PreFlight {
		return "refused before sending: " + rf.Message + "; fix the table (or exclude it): the update is not sent while it holds such a value"
	}
	head := fmt.Sprintf("HTTP %d", rf.Status)
	if t := http.StatusText(rf.Status); t != "" && rf.Type == "" {
		head += " " + t
	}
	if rf.Type != "" {
		head += " " + rf.Type
	}
	return fmt.Sprintf("refused by the catalog (%s: %s); the same update is refused every time: fix the table (or exclude it); retried after a long backoff", head, rf.Message)
}
