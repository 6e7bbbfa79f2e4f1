package sync_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
)

// dataOnly is a data-only commit's add action.
func dataOnly(v int64) map[string]any {
	return map[string]any{"add": map[string]any{"path": fmt.Sprintf("part-%d.parquet", v), "partitionValues": map[string]string{},
		"size": 100, "modificationTime": 1800000000000 + v, "dataChange": true}}
}

func watermark(t *testing.T, e *env, table string) int64 {
	t.Helper()
	v := e.record(table).LastCommitVersion
	if v == nil {
		t.Fatal("no watermark")
	}
	return *v
}

// watermark_updates: with_changes sends nothing for a data-only commit and
// still sends a schema change, with the watermark; every_cycle (the
// default) sends the watermark alone; an interval sends it once the
// recorded commit is older than the interval.
func TestWatermarkUpdates(t *testing.T) {
	const schema = `{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}%s]}`
	type step struct {
		commit  map[string]any
		after   time.Duration // the clock, after the newest commit's timestamp
		actions []string      // nil: nothing sent
		mark    int64         // the catalog's watermark after the step
	}
	schemaChange := metaData(fmt.Sprintf(schema, `,{"name":"added","type":"long","nullable":true,"metadata":{}}`), "", map[string]string{})
	upd := []string{"update-metadata-snapshot-version"}
	for _, c := range []struct {
		policy string
		steps  []step
	}{
		{"every_cycle", []step{{dataOnly(2), time.Minute, upd, 2}, {dataOnly(3), time.Minute, upd, 3}}},
		{"with_changes", []step{
			{dataOnly(2), time.Minute, nil, 1},
			{dataOnly(3), 48 * time.Hour, nil, 1},
			{schemaChange, time.Minute, []string{"set-columns", "update-metadata-snapshot-version"}, 4},
			{dataOnly(5), time.Minute, nil, 4},
		}},
		{"10m", []step{
			// The recorded v1 (delta-0.8.0's own) is years old: sent.
			{dataOnly(2), time.Minute, upd, 2},
			{dataOnly(3), time.Minute, nil, 2},
			{nil, 9 * time.Minute, nil, 2},
			{nil, 11 * time.Minute, upd, 3},
			{schemaChange, time.Minute, []string{"set-columns", "update-metadata-snapshot-version"}, 4},
		}},
	} {
		t.Run(c.policy, func(t *testing.T) {
			w, err := sync.ParseWatermarkUpdates(c.policy)
			if err != nil {
				t.Fatal(err)
			}
			e := uctestEnv(t)
			dir := e.register("delta-0.8.0", "t", -1)
			if got := watermark(t, e, "t"); got != 1 {
				t.Fatalf("registered at %d", got)
			}
			v := int64(1)
			for i, s := range c.steps {
				if s.commit != nil {
					v++
					writeCommit(t, dir, v, s.commit)
				}
				now := time.UnixMilli(1800000000000 + v).Add(s.after)
				e.srv.ResetRequests()
				rep := e.reconciler(only(e, "t"), func(o *sync.Options) {
					o.WatermarkUpdates = w
					o.Now = func() time.Time { return now }
				}).Sync(context.Background())
				res := rep.Results[0]
				wantOutcome := sync.OutcomeSynced
				if s.actions == nil {
					wantOutcome = sync.OutcomeUnchanged
				}
				if res.Outcome != wantOutcome || !slices.Equal(res.Actions, s.actions) || (s.actions == nil) != (e.updates() == 0) {
					t.Fatalf("step %d (v%d): %s, actions %v, %d updates; want %s, %v\n%s", i, v, res.Outcome, res.Actions, e.updates(), wantOutcome, s.actions, reportText(rep))
				}
				if res.Status != sync.StatusSynced {
					t.Errorf("step %d: status %s", i, res.Status)
				}
				if got := watermark(t, e, "t"); got != s.mark {
					t.Errorf("step %d: watermark %d, want %d", i, got, s.mark)
				}
			}
		})
	}
	for _, bad := range []string{"sometimes", "0s", "-5m"} {
		if _, err := sync.ParseWatermarkUpdates(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
