package sync

import (
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/plan"
)

// NewSavedPlan is the saved plan of a dry run's report for a catalog of
// kind (catalog.Kind.Name): every table a sync would write, and every
// table whose write was held, with the exact write. Tables with nothing
// to send (in sync, flagged watch-only, failed) are not in it.
func NewSavedPlan(rep *Report, catalogURL, kind, version string, now time.Time) *change.SavedPlan {
	sp := change.NewSavedPlan(catalogURL, kind, version, now)
	for _, res := range rep.Results {
		w := res.Write
		if (!res.WouldUpdate && res.Held == "") || w == nil || w.Create || res.TableID == "" {
			continue
		}
		var changes []plan.Change
		if res.Plan != nil {
			changes = res.Plan.Changes()
		}
		sp.Add(w, res.Held, changes)
	}
	return sp
}

// kindTitle is k's name as sentences say it.
func kindTitle(k catalog.Kind) string { return change.KindTitle(k.Name()) }

// vends reports whether k vends storage credentials (catalog.Vendor).
func vends(k catalog.Kind) bool {
	_, ok := k.(catalog.Vendor)
	return ok
}
