package sync_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/sync"
)

// TestDeltaRSTablesEndToEnd is the end-to-end proof with tables written by
// delta-rs (testdata/deltars/evolve.py): two EXTERNAL tables and one
// MANAGED table are registered, delta-rs evolves the external ones (a new
// column, a property set and one unset, a protocol upgrade, a new
// description), one sync cycle makes both catalog views match the logs, a
// second cycle sends nothing, a diverged MANAGED record is only flagged, and
// a concurrent writer costs a reload and re-plan, not a lost update.
//
// It runs against uctest, or the real server at DELTASYNC_UC_URL.
func TestDeltaRSTablesEndToEnd(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	root := t.TempDir()

	// 1. Two EXTERNAL tables created by delta-rs and registered from their
	// logs, and one MANAGED table created the way an engine does.
	external := []string{"orders", "customers"}
	dirs := map[string]string{}
	for _, table := range external {
		dirs[table] = filepath.Join(root, table)
		evolve(t, py, dirs[table], "create")
		if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dirs[table]), e.name(table), "file://"+dirs[table]); err != nil {
			t.Fatalf("register %s: %v", table, err)
		}
		e.matchesLog(table, dirs[table])
	}
	const managed = "events"
	e.createManaged(managed)

	// 2. delta-rs evolves the external tables, one commit per step.
	for table, steps := range map[string][]string{
		"orders":    {"add_column", "set_property", "unset_property", "upgrade_protocol", "set_description"},
		"customers": {"append", "set_property", "unset_property", "add_column", "set_description"},
	} {
		for _, step := range steps {
			evolve(t, py, dirs[table], step)
		}
	}
	orders := snapshot(t, dirs["orders"])
	if orders.Version != 5 || !slices.Contains(orders.Protocol.WriterFeatures, "deletionVectors") ||
		orders.Metadata.Description != "orders described at v5" || orders.Metadata.Configuration["owner.team"] != "analytics" ||
		!strings.Contains(orders.Metadata.SchemaString, `"score"`) {
		t.Fatalf("delta-rs did not evolve orders as planned: v%d %+v %+v", orders.Version, orders.Protocol, orders.Metadata)
	}

	// 3. One cycle in sync mode: both external tables synced in one request
	// each, the in-sync MANAGED table left alone.
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}}
	e.resetRequests()
	rep := e.reconciler(rules).Sync(ctx)
	want := map[string]sync.Outcome{"orders": sync.OutcomeSynced, "customers": sync.OutcomeSynced, managed: sync.OutcomeUnchanged}
	if diff := cmp.Diff(want, outcomes(e, rep)); diff != "" {
		t.Fatalf("first cycle outcomes (-want +got):\n%s\n%s", diff, reportText(rep))
	}
	wantActions := []string{"set-columns", "set-properties", "remove-properties", "set-protocol", "set-table-comment",
		"update-metadata-snapshot-version"}
	for _, r := range rep.Results {
		t.Logf("first cycle: %s %s/%s v%d actions %v", r.Table, r.Outcome, r.Status, deref(r.LogVersion), r.Actions)
		if strings.HasSuffix(r.Table, ".orders") {
			for _, a := range wantActions {
				if !slices.Contains(r.Actions, a) {
					t.Errorf("orders synced with %v, missing %s", r.Actions, a)
				}
			}
		}
	}
	if e.srv != nil {
		if n := e.updates(); n != 2 {
			t.Errorf("first cycle sent %d update requests, want one per external table (2)", n)
		}
	}
	for _, table := range external {
		e.matchesLog(table, dirs[table], "delta.deletedFileRetentionDuration")
	}

	// 4. A second cycle sends nothing: no updateTable request, no etag rolled.
	tables := append(slices.Clone(external), managed)
	etags := e.etags(tables)
	e.resetRequests()
	rep = e.reconciler(rules).Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("second cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	if e.srv != nil {
		if n := e.updates(); n != 0 {
			t.Errorf("second cycle sent %d update requests, want 0", n)
		}
	}
	if diff := cmp.Diff(etags, e.etags(tables)); diff != "" {
		t.Errorf("second cycle rolled etags (-before +after):\n%s", diff)
	}

	// 5. The MANAGED record diverges from its log: flagged, never written.
	e.divergeCatalog(managed, map[string]string{"owner.team": "edited-in-the-catalog"})
	etags = e.etags(tables)
	e.resetRequests()
	rep = e.reconciler(rules).Sync(ctx)
	want = map[string]sync.Outcome{"orders": sync.OutcomeUnchanged, "customers": sync.OutcomeUnchanged, managed: sync.OutcomeFlagged}
	if diff := cmp.Diff(want, outcomes(e, rep)); diff != "" {
		t.Fatalf("after the MANAGED record diverged (-want +got):\n%s\n%s", diff, reportText(rep))
	}
	for _, r := range rep.Results {
		t.Logf("after divergence: %s %s/%s %s", r.Table, r.Outcome, r.Status, r.Reason)
		if strings.HasSuffix(r.Table, "."+managed) && (r.Status != sync.StatusOutOfSync || len(r.Actions) > 0) {
			t.Errorf("MANAGED table: %s %s actions %v (%s), want OutOfSync with nothing sent", r.Outcome, r.Status, r.Actions, r.Reason)
		}
	}
	if e.srv != nil {
		if n := e.updates(); n != 0 {
			t.Errorf("sent %d update requests, want 0 (MANAGED is watch-only)", n)
		}
	}
	if diff := cmp.Diff(etags, e.etags(tables)); diff != "" {
		t.Errorf("a table was written (-before +after):\n%s", diff)
	}

	// 6. A concurrent writer changes the record between the reconciler's
	// load and its update: 409, reload, re-plan, success.
	evolve(t, py, dirs["customers"], "upgrade_protocol")
	e.concurrentWriter(rules, "customers", dirs["customers"])
}

// concurrentWriter makes another writer set a catalog-only property just
// before the reconciler's first updateTable for table reaches the server
// (uctest: BeforeUpdate; a real server: a reverse proxy in front of it),
// then checks that the reconciler reloaded and re-planned.
func (e *env) concurrentWriter(rules []sync.Rule, table, dir string) {
	t := e.t
	ctx := context.Background()
	const key = "other.writer"
	var fired atomic.Bool
	var updates func() ([]string, []int)
	var rec *sync.Reconciler
	if e.srv != nil {
		e.srv.BeforeUpdate(func(name string) {
			if name == e.name(table).String() && fired.CompareAndSwap(false, true) {
				mustMutate(t, e.srv, name, func(tb *uctest.Table) { tb.Properties[key] = "was here" })
			}
		})
		e.srv.ResetRequests()
		updates = func() ([]string, []int) { return e.updateBodies(), nil }
		rec = e.reconciler(rules)
	} else {
		p := e.interloper(table, func() {
			fired.Store(true)
			if err := e.setProperties(table, map[string]string{key: "was here"}); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		})
		updates = p.updates
		rec = e.reconciler(rules, func(o *sync.Options) { o.Catalog = kindOf(p.client) })
	}
	rep := rec.Sync(ctx)
	var res *sync.Result
	for i := range rep.Results {
		if rep.Results[i].Table == e.name(table).String() {
			res = &rep.Results[i]
		}
	}
	if !fired.Load() || res == nil || res.Outcome != sync.OutcomeSynced || res.Attempts != 2 {
		t.Fatalf("concurrent writer (fired %v): want %s synced on the 2nd attempt\n%s", fired.Load(), table, reportText(rep))
	}
	b, statuses := updates()
	t.Logf("concurrent writer: %s %s after %d attempts, %d updateTable requests, statuses %v (uctest records none)",
		res.Table, res.Outcome, res.Attempts, len(b), statuses)
	if len(b) != 2 {
		t.Fatalf("%d updateTable requests, want 2 (one 409, then one re-planned from a reload)", len(b))
	}
	if statuses != nil && !cmp.Equal(statuses, []int{http.StatusConflict, http.StatusOK}) {
		t.Errorf("updateTable statuses %v, want [409 200]", statuses)
	}
	// The first request was planned before the other writer's change, the
	// second after reloading it (the log wins: the catalog-only key goes).
	if strings.Contains(b[0], key) || !strings.Contains(b[1], key) {
		t.Errorf("second request was not re-planned from a reload:\n%s\n%s", b[0], b[1])
	}
	for i, body := range b {
		var req uc.UpdateTableRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(req.Requirements, func(r uc.Requirement) bool { return r.RequirementType() == "assert-etag" }) {
			t.Errorf("request %d has no assert-etag: a blind overwrite", i+1)
		}
		if !slices.ContainsFunc(req.Updates, func(u uc.Update) bool { return u.Action() == "set-protocol" }) {
			t.Errorf("request %d does not carry the protocol upgrade: %s", i+1, body)
		}
	}
	e.matchesLog(table, dir, key)
}
