package sync_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/sync"
)

// An update the catalog never accepted (every attempt lost to a
// concurrent writer) is reported as not applied, never as sent; one that
// succeeds after a conflict is not.
func TestRefusedUpdateIsReportedNotApplied(t *testing.T) {
	for _, conflicts := range []int{1, 100} {
		e := uctestEnv(t)
		dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
		copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
		n := 0
		e.srv.BeforeUpdate(func(name string) {
			if n++; n <= conflicts {
				mustMutate(t, e.srv, name, func(tb *uctest.Table) { tb.Properties["w"] = strings.Repeat("x", n) })
			}
		})
		rep := e.reconciler(only(e, "t")).Sync(context.Background())
		text := reportText(rep)
		res := rep.Results[0]
		if conflicts == 1 {
			if res.Outcome != sync.OutcomeSynced || res.NotApplied || strings.Contains(text, "not applied") {
				t.Errorf("synced after one conflict, yet: outcome %s, not applied %v\n%s", res.Outcome, res.NotApplied, text)
			}
			continue
		}
		if res.Outcome != sync.OutcomeFailed || !res.NotApplied {
			t.Fatalf("outcome %s, not applied %v; want failed and not applied\n%s", res.Outcome, res.NotApplied, text)
		}
		if !strings.Contains(text, "  not applied (the update failed, see reason): ") || strings.Contains(text, "  sent: ") {
			t.Errorf("text report of a refused update:\n%s", text)
		}
	}
}
