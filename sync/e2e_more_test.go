package sync_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

func only(e *env, table string) []sync.Rule {
	return []sync.Rule{{Include: []string{e.name(table).String()}}}
}

// updateBodies returns the bodies of the updateTable requests sent.
func (e *env) updateBodies() []string {
	var out []string
	for _, r := range e.srv.Requests() {
		if r.Method == "POST" && strings.Contains(r.Path, "/delta/v1/catalogs/") && !strings.HasSuffix(r.Path, "/tables") {
			out = append(out, string(r.Body))
		}
	}
	return out
}

func actionsOf(t *testing.T, body string) []string {
	t.Helper()
	var req uc.UpdateTableRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range req.Updates {
		out = append(out, u.Action())
	}
	var reqs []string
	for _, r := range req.Requirements {
		reqs = append(reqs, r.RequirementType())
	}
	if !cmp.Equal(reqs, []string{"assert-table-uuid", "assert-etag"}) {
		t.Errorf("requirements %v, want assert-table-uuid and assert-etag", reqs)
	}
	return out
}

func TestConcurrentWriterCausesReloadNotLostUpdate(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	fired := false
	e.srv.BeforeUpdate(func(name string) {
		if fired {
			return
		}
		fired = true // another writer gets there first
		mustMutate(t, e.srv, name, func(tb *uctest.Table) { tb.Properties["other.writer"] = "was here" })
	})
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeSynced || res[0].Attempts != 2 {
		t.Fatalf("results %+v, want synced on the 2nd attempt", res)
	}
	bodies := e.updateBodies()
	if len(bodies) != 2 {
		t.Fatalf("%d update requests, want 2 (409, then re-planned)", len(bodies))
	}
	// The re-plan saw the other writer's change and removed it (the log wins).
	if !strings.Contains(bodies[1], "other.writer") || strings.Contains(bodies[0], "other.writer") {
		t.Errorf("second request was not re-planned from a reload:\n%s\n%s", bodies[0], bodies[1])
	}
	if p := plan.Diff(sync.LogStateOf(snapshot(t, dir), "file://"+dir), e.record("t"), plan.DiffOptions{}); !p.Empty() {
		t.Errorf("catalog still differs: %v", p.Kinds())
	}
}

func TestConflictsAreBounded(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	n := 0
	e.srv.BeforeUpdate(func(name string) {
		n++
		mustMutate(t, e.srv, name, func(tb *uctest.Table) { tb.Properties["w"] = strings.Repeat("x", n) })
	})
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeFailed || res[0].ErrorReason != sync.ReasonConflict || res[0].Attempts != 3 {
		t.Fatalf("results %+v, want failed/conflict after 3 attempts", res)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	e.srv.FailNext(2, 503)
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	if rep.Failed() || rep.Count(sync.OutcomeSynced) != 1 {
		t.Fatalf("with two 503s: %s\n%s", rep.Summary(), reportText(rep))
	}
}

func TestWatermarkOnlySendsSnapshotVersion(t *testing.T) {
	e := uctestEnv(t)
	// basic_partitioned v1 only adds data.
	dir := e.register("basic_partitioned", "t", 0)
	copyLog(t, "basic_partitioned", dir, -1)
	e.srv.ResetRequests()
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	bodies := e.updateBodies()
	if rep.Count(sync.OutcomeSynced) != 1 || len(bodies) != 1 {
		t.Fatalf("%s, %d requests\n%s", rep.Summary(), len(bodies), reportText(rep))
	}
	if got := actionsOf(t, bodies[0]); !cmp.Equal(got, []string{"update-metadata-snapshot-version"}) {
		t.Errorf("actions %v, want only update-metadata-snapshot-version", got)
	}
	if v := e.record("t").LastCommitVersion; v == nil || *v != 1 {
		t.Errorf("watermark %v, want 1", v)
	}
}

func TestNeverPushesOlderSnapshot(t *testing.T) {
	e := uctestEnv(t)
	e.register("basic_partitioned", "t", -1)
	mustMutate(t, e.srv, e.name("t").String(), func(tb *uctest.Table) {
		tb.Properties["delta.lastUpdateVersion"] = "9"
		tb.Properties["stray"] = "x"
	})
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeFailed || res[0].ErrorReason != sync.ReasonConflict {
		t.Fatalf("results %+v, want failed/conflict", res)
	}
	if n := e.updates(); n != 0 {
		t.Errorf("sent %d updates with a stale log", n)
	}
}

func TestManagedTableReadAtRatifiedVersionAndFlagged(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("catalog_managed_0", "m", -1) // registered from the published v0
	staged, err := os.ReadDir(filepath.Join(dir, "_delta_log", "_staged_commits"))
	if err != nil {
		t.Fatal(err)
	}
	mustMutate(t, e.srv, e.name("m").String(), func(tb *uctest.Table) {
		tb.Type = "MANAGED"
		for i, f := range staged {
			tb.Commits = append(tb.Commits, uctest.Commit{Version: int64(i + 1), Timestamp: 1749830881799 + int64(i),
				FileName: f.Name(), FileSize: 100, FileModificationTimestamp: 1749830881799})
		}
		tb.Properties["stray"] = "x"
	})
	before, _ := e.srv.Table(e.name("m").String())
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "m")).Sync(context.Background()).Results
	if len(res) != 1 {
		t.Fatalf("results %+v", res)
	}
	r := res[0]
	if r.Outcome != sync.OutcomeFlagged || r.Status != sync.StatusOutOfSync || r.LogVersion == nil || *r.LogVersion != 2 {
		t.Errorf("got %s/%s at log version %v (%s), want flagged OutOfSync at the ratified v2", r.Outcome, r.Status, r.LogVersion, r.Reason)
	}
	if after, _ := e.srv.Table(e.name("m").String()); after.Etag != before.Etag || e.updates() != 0 {
		t.Errorf("managed table written")
	}
}

func TestUnreadableLogIsFlaggedUnknown(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("basic_partitioned", "t", -1)
	// Corrupt the newest commit: a log that cannot be read is flagged, never written.
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000002.json"), []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Status != sync.StatusUnknown || res[0].Outcome == sync.OutcomeSynced || e.updates() != 0 {
		t.Fatalf("results %+v", res)
	}
	// A location that does not exist at all: nothing written either.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	res = e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Status != sync.StatusUnknown || e.updates() != 0 {
		t.Fatalf("results %+v", res)
	}
}

func TestCancelFinishesTableInFlight(t *testing.T) {
	e := uctestEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		dir := e.register("log-replay-latest-metadata-protocol", n, 0)
		copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.srv.BeforeUpdate(func(string) { cancel() }) // SIGTERM arrives mid-update
	rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}, func(o *sync.Options) { o.Concurrency, o.ReadConcurrency = 1, 1 })
	rep := rec.Sync(ctx)
	if len(rep.Results) != 1 || rep.Results[0].Outcome != sync.OutcomeSynced || !rep.Interrupted {
		t.Fatalf("want the table in flight synced and no other started: %s\n%s", rep.Summary(), reportText(rep))
	}
	st := rec.Status()
	if len(st) != 3 || st[0].Status != sync.StatusSynced || st[0].LastSync.IsZero() {
		t.Errorf("status %+v", st)
	}
}

func TestSkipsNonDeltaAndHonoursShards(t *testing.T) {
	e := uctestEnv(t)
	for _, n := range []string{"t1", "t2", "t3", "t4", "t5", "t6"} {
		e.register("delta-0.8.0", n, -1)
	}
	mustMutate(t, e.srv, e.name("t6").String(), func(tb *uctest.Table) { tb.Format = "PARQUET" })
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}},
			func(o *sync.Options) { o.Shard = sync.Shard{Index: i, Count: 3} })
		rep := rec.Sync(context.Background())
		for _, r := range rep.Results {
			seen[r.Table]++
		}
		for _, s := range rep.Skipped {
			if s.Table != e.name("t6").String() || !strings.Contains(s.Reason, "PARQUET") {
				t.Errorf("skipped %+v", s)
			}
			seen[s.Table]++
		}
	}
	if len(seen) != 6 {
		t.Errorf("tables seen across shards: %v", seen)
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s handled by %d shards", n, c)
		}
	}
}

func TestDryRunNeverWrites(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	e.srv.ResetRequests()
	rep := e.reconciler(only(e, "t"), func(o *sync.Options) { o.DryRun = true }).Sync(context.Background())
	if e.updates() != 0 || len(rep.Results) != 1 || !rep.Results[0].WouldUpdate || !rep.Drift() {
		t.Fatalf("dry run: %s\n%s", rep.Summary(), reportText(rep))
	}
	var b strings.Builder
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil || doc["format_version"] != sync.ReportFormatVersion {
		t.Errorf("JSON report: %v %v", err, b.String())
	}
}

func TestVendedCredentialsReadTheLog(t *testing.T) {
	e := uctestEnv(t)
	dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", dir, -1)
	e.srv.ResetRequests()
	now := time.Now() // uctest vends credentials valid for an hour from its own clock
	rec := e.reconciler(only(e, "t"), func(o *sync.Options) {
		o.VendedCredentials = true
		o.Now = func() time.Time { return now }
	})
	vends := func() int {
		n := 0
		for _, r := range e.srv.Requests() {
			if strings.HasSuffix(r.Path, "/credentials") && strings.Contains(r.Query, "operation=READ") {
				n++
			}
		}
		return n
	}
	if rep := rec.Sync(context.Background()); rep.Count(sync.OutcomeSynced) != 1 {
		t.Fatalf("%s\n%s", rep.Summary(), reportText(rep))
	}
	if n := vends(); n != 1 {
		t.Fatalf("first cycle vended READ credentials %d times, want 1", n)
	}
	// Still valid: the next cycle reuses them.
	if rep := rec.Sync(context.Background()); rep.Count(sync.OutcomeUnchanged) != 1 {
		t.Fatalf("%s\n%s", rep.Summary(), reportText(rep))
	}
	if n := vends(); n != 1 {
		t.Errorf("second cycle vended again (%d in all) although the credentials are valid for an hour", n)
	}
	// Within the margin before expiry: vended afresh.
	now = now.Add(56 * time.Minute)
	if rep := rec.Sync(context.Background()); rep.Count(sync.OutcomeUnchanged) != 1 {
		t.Fatalf("%s\n%s", rep.Summary(), reportText(rep))
	}
	if n := vends(); n != 2 {
		t.Errorf("near expiry: %d vends in all, want 2", n)
	}
}
