package sync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

const refusalSchema = `{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}%s]}`

// refusalTable registers the corpus's delta-0.8.0 and writes a version 2
// with a metadata change the catalog refuses.
func (e *env) refusalTable(t *testing.T, table string, v2 map[string]any) {
	t.Helper()
	dir := e.register("delta-0.8.0", table, -1)
	writeCommit(t, dir, 2, v2)
}

// A metadata change the catalog refuses is flagged refused with the
// server's answer, not failed with reason catalog, and run does not resend
// it every cycle: it waits out RefusalBackoff. A value wider than the
// server stores is refused before sending, in a sync and in a plan alike.
// Against the real server when DELTASYNC_UC_URL is set.
func TestRefusedUpdateIsFlaggedAndBackedOff(t *testing.T) {
	cases := []struct {
		name      string
		v2        map[string]any
		status    int
		typ       string
		message   string
		preFlight bool
	}{
		{"column names equal ignoring case", metaData(fmt.Sprintf(refusalSchema, `,{"name":"VALUE","type":"long","nullable":true,"metadata":{}}`), "", map[string]string{}),
			400, "InvalidParameterValueException", "Duplicate field name (case-insensitive)", false},
		{"property value over 255", metaData(fmt.Sprintf(refusalSchema, ""), "", map[string]string{"team.note": strings.Repeat("n", 300)}),
			0, "ValueTooLong", `value of property "team.note" is 300 characters; Unity Catalog stores at most 255`, true},
	}
	e := newEnv(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table := fmt.Sprintf("refused_%d", i)
			e.refusalTable(t, table, c.v2)
			before := e.record(table).Etag
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			reg := prometheus.NewRegistry()
			r := e.reconciler(only(e, table), func(o *sync.Options) {
				o.Now = func() time.Time { return now }
				o.Metrics = metrics.New(reg, "test")
			})
			rep := r.Sync(context.Background())
			res := rep.Results[0]
			if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonRefused || res.Status != sync.StatusOutOfSync || !res.NotApplied {
				t.Fatalf("outcome %s, error_reason %s, status %s, not applied %v; want flagged, refused, OutOfSync, not applied\n%s",
					res.Outcome, res.ErrorReason, res.Status, res.NotApplied, reportText(rep))
			}
			rf := res.Refused
			if rf == nil || rf.Status != c.status || rf.Type != c.typ || !strings.Contains(rf.Message, c.message) || rf.PreFlight != c.preFlight {
				t.Errorf("refusal %+v, want status %d type %s message containing %q", rf, c.status, c.typ, c.message)
			}
			if !strings.Contains(res.Reason, c.message) || !strings.Contains(res.Reason, "refused") {
				t.Errorf("reason %q", res.Reason)
			}
			if got := errorsTotal(t, reg, sync.ReasonRefused); got != 1 {
				t.Errorf("deltasync_errors_total{reason=refused} = %v, want 1", got)
			}
			if got := errorsTotal(t, reg, sync.ReasonCatalog); got != 0 {
				t.Errorf("deltasync_errors_total{reason=catalog} = %v, want 0", got)
			}
			if after := e.record(table).Etag; after != before {
				t.Errorf("record changed: etag %s -> %s", before, after)
			}
			st := r.Status()[0]
			if st.NextAttempt.Before(now.Add(30*time.Minute)) || st.Reason != res.Reason {
				t.Errorf("status: next attempt %v (want >= 30m after %v), reason %q", st.NextAttempt, now, st.Reason)
			}
			var js strings.Builder
			if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"error_reason": "refused"`) || !strings.Contains(js.String(), `"refused": 1`) {
				t.Errorf("JSON report: %v\n%s", err, js.String())
			}
			if !strings.Contains(rep.Summary(), "1 refused") {
				t.Errorf("summary %q", rep.Summary())
			}

			// The next cycles (every minute) do not resend it.
			now = now.Add(time.Minute)
			if rep := r.Sync(context.Background()); len(rep.Results) != 0 || len(rep.Deferred) != 1 {
				t.Errorf("a minute later: %d results, deferred %v; want the table deferred", len(rep.Results), rep.Deferred)
			}
			now = now.Add(2 * time.Hour)
			if rep := r.Sync(context.Background()); len(rep.Results) != 1 || rep.Results[0].ErrorReason != sync.ReasonRefused {
				t.Errorf("after the backoff: %+v", rep.Results)
			}

			// A plan says so too, for what the client can tell before sending.
			if c.preFlight {
				plan := e.reconciler(only(e, table), func(o *sync.Options) { o.DryRun = true }).Sync(context.Background())
				if p := plan.Results[0]; p.ErrorReason != sync.ReasonRefused || p.WouldUpdate || p.Refused == nil {
					t.Errorf("plan: %+v\n%s", p, reportText(plan))
				}
			}
		})
	}
}
