package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// writeCommit appends commit version v to the log in dir with the given
// actions (one JSON object per line).
func writeCommit(t *testing.T, dir string, v int64, actions ...map[string]any) {
	t.Helper()
	var b []byte
	for _, a := range append([]map[string]any{{"commitInfo": map[string]any{"timestamp": 1800000000000 + v, "operation": "TEST"}}}, actions...) {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	name := filepath.Join(dir, "_delta_log", fmtVersion(v)+".json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fmtVersion(v int64) string { return fmt.Sprintf("%020d", v) }

func metaData(schema, description string, conf map[string]string) map[string]any {
	return map[string]any{"metaData": map[string]any{
		"id": "testId", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
		"schemaString": schema, "partitionColumns": []string{}, "configuration": conf,
		"description": description, "createdTime": 1697070240252,
	}}
}

// TestNewCommitWithColumnCommentAndUnsetProperty writes a commit the way an
// engine would (new column, table comment, property unset) and syncs it.
func TestNewCommitWithColumnCommentAndUnsetProperty(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("data-skipping-change-stats-collected-across-versions", "t", -1)
	writeCommit(t, dir, 5, metaData(
		`{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{"comment":"the a"}},{"name":"b","type":"string","nullable":true,"metadata":{}},{"name":"added","type":{"type":"map","keyType":"string","valueType":"decimal(10,2)","valueContainsNull":true},"nullable":false,"metadata":{}}]}`,
		"orders, v5", map[string]string{}))
	e.srv.ResetRequests()
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	if rep.Count(sync.OutcomeSynced) != 1 || e.updates() != 1 {
		t.Fatalf("%s\n%s", rep.Summary(), reportText(rep))
	}
	rec := e.record("t")
	if rec.Comment != "orders, v5" {
		t.Errorf("comment %q", rec.Comment)
	}
	if _, ok := rec.Properties["delta.dataSkippingNumIndexedCols"]; ok {
		t.Errorf("unset property still in the catalog: %v", rec.Properties)
	}
	if p := plan.Diff(sync.LogStateOf(snapshot(t, dir), "file://"+dir), rec, plan.DiffOptions{}); !p.Empty() {
		t.Errorf("still differs: %v", p.Kinds())
	}
}

func TestUnsupportedTypeIsFlagged(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("delta-0.8.0", "t", -1)
	writeCommit(t, dir, 2, metaData(
		`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}},{"name":"v","type":"void","nullable":true,"metadata":{}}]}`,
		"", map[string]string{}))
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeFlagged || res[0].ErrorReason != sync.ReasonUnsupported || e.updates() != 0 {
		t.Fatalf("results %+v", res)
	}
}

// TestFailingTableBacksOff: a failed table waits out its backoff before it
// is tried again; the clock is injected.
func TestFailingTableBacksOff(t *testing.T) {
	e := uctestEnv(t)
	now := time.Unix(1700000000, 0)
	rec := e.reconciler(only(e, "missing"), func(o *sync.Options) {
		o.Now = func() time.Time { return now }
		o.Backoff = sync.Backoff{Initial: time.Minute, Max: time.Hour, Jitter: func(d time.Duration) time.Duration { return d }}
	})
	ctx := context.Background()
	if rep := rec.Sync(ctx); rep.Count(sync.OutcomeFailed) != 1 {
		t.Fatalf("first: %s", rep.Summary())
	}
	now = now.Add(30 * time.Second)
	if rep := rec.Sync(ctx); len(rep.Results) != 0 || len(rep.Deferred) != 1 {
		t.Fatalf("inside backoff: %s", rep.Summary())
	}
	now = now.Add(31 * time.Second)
	if rep := rec.Sync(ctx); rep.Count(sync.OutcomeFailed) != 1 {
		t.Fatalf("after backoff: %s", rep.Summary())
	}
	st := rec.Status()
	if len(st) != 1 || st[0].Failures != 2 || !st[0].NextAttempt.Equal(now.Add(2*time.Minute)) || st[0].LastError == "" {
		t.Errorf("status %+v", st)
	}
}
