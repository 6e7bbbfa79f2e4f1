package sync

import (
	"fmt"
	"net/http"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

// DefaultRefusalBackoff is 1h doubling up to 12h: a refused update is not
// resent every cycle, nor every step of the failure backoff. A fix
// (a new commit that renames the column, a shorter property, an excluded
// table) is picked up when the wait ends, or at once by `deltasync once`.
func DefaultRefusalBackoff() Backoff { return Backoff{Initial: time.Hour, Max: 12 * time.Hour} }

// writeFailed classifies an updateTable error other than an etag conflict:
// a refusal flags the table (ReasonRefused) and notes the server's answer
// on res; anything else fails it (ReasonCatalog, retried with Backoff).
func writeFailed(res *Result, err error) error {
	rf, ok := catalog.AsRefusal(err)
	if !ok {
		return failed(ReasonCatalog, err)
	}
	res.Refused = &rf
	return &problem{outcome: OutcomeFlagged, reason: ReasonRefused, err: fmt.Errorf("%s", refusalText(rf))}
}

// preflight is the catalog's own width check of res.Updates, for a dry
// run: a plan says the update would be refused rather than that it would
// be sent.
func (r *Reconciler) preflight(res *Result) error {
	req := catalog.UpdateTableRequest{Updates: res.Updates}
	if err := r.opts.Catalog.Limits().CheckUpdate(req); err != nil {
		return writeFailed(res, err)
	}
	return nil
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
