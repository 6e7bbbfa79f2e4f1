package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// deltaRequests counts requests to the Delta API (/delta/v1/...).
func deltaRequests(srv *uctest.Server) (n int, paths []string) {
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "/delta/v1/") {
			n++
			paths = append(paths, r.Method+" "+r.Path)
		}
	}
	return n, paths
}

// TestReadOnlyWithoutDeltaAPI: against a catalog whose Delta API answers
// 404 (uctest switched off; the real server has the Delta API, so this is
// tested against uctest only), tables are read with the classic getTable,
// compared by the same Diff as with the Delta API, and every drift is
// flagged and never written, with the reason in the report.
func TestReadOnlyWithoutDeltaAPI(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	e.register("basic_partitioned", "same", -1)
	e.register("delta-0.8.0-partitioned", "drifted", -1)
	mustMutate(t, e.srv, e.name("drifted").String(), func(tb *uctest.Table) {
		tb.Properties["stray"] = "x"
		c := "set by hand"
		tb.Comment = &c
	})
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}}}

	// With the Delta API, a dry run: the plan a classic read must match.
	withDelta := e.reconciler(rules, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	want := map[string]*plan.Plan{}
	for _, r := range withDelta.Results {
		want[r.Table] = r.Plan
	}

	e.srv.SetDeltaAPI(false)
	before, _ := e.srv.Table(e.name("drifted").String())
	e.srv.ResetRequests()
	r := e.reconciler(rules) // mode sync, not a dry run: still never written
	rep := r.Sync(ctx)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	got := map[string]sync.Result{}
	for _, res := range rep.Results {
		got[res.Table] = res
	}
	same, drifted := got[e.name("same").String()], got[e.name("drifted").String()]
	if same.Outcome != sync.OutcomeUnchanged || same.Status != sync.StatusSynced {
		t.Errorf("in-sync table read through the classic API: %s %s: %s", same.Outcome, same.Status, same.Reason)
	}
	if drifted.Outcome != sync.OutcomeFlagged || drifted.Status != sync.StatusOutOfSync ||
		drifted.Reason != "catalog has no Delta API: read-only, drift is flagged, never written" {
		t.Errorf("drifted table: %s %s: %q", drifted.Outcome, drifted.Status, drifted.Reason)
	}
	if drifted.Plan == nil || want[drifted.Table] == nil {
		t.Fatalf("drifted table has no plan (classic %v, delta %v)", drifted.Plan, want[drifted.Table])
	}
	if d := cmp.Diff(want[drifted.Table], drifted.Plan); d != "" {
		t.Errorf("classic read planned differently from the Delta API (-delta +classic):\n%s", d)
	}
	if drifted.Plan.Properties == nil || drifted.Plan.Comment == nil {
		t.Errorf("plan misses the property and comment drift: %v", drifted.Plan.Kinds())
	}
	if len(drifted.Actions) != 0 || drifted.WouldUpdate {
		t.Errorf("read-only table has actions %v (would update %v)", drifted.Actions, drifted.WouldUpdate)
	}
	after, _ := e.srv.Table(e.name("drifted").String())
	if after.Etag != before.Etag || after.Properties["stray"] != "x" {
		t.Errorf("read-only table was written: etag %s → %s, stray=%q", before.Etag, after.Etag, after.Properties["stray"])
	}
	// Only the first tables' loadTable (404) and getConfig were sent to the
	// Delta API, one pair per worker at most (Concurrency 2): the catalog is
	// then known read-only.
	if n, paths := deltaRequests(e.srv); n > 4 || !strings.Contains(strings.Join(paths, "\n"), "/delta/v1/config") {
		t.Errorf("%d Delta API requests, want a getConfig and at most one loadTable and getConfig per worker:\n%s", n, strings.Join(paths, "\n"))
	}
	if !cmp.Equal(rep.ReadOnly, []string{e.catalog}) || !cmp.Equal(r.ReadOnlyCatalogs(), []string{e.catalog}) {
		t.Errorf("read-only catalogs %v / %v, want [%s]", rep.ReadOnly, r.ReadOnlyCatalogs(), e.catalog)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	line := "catalog " + e.catalog + " has no Delta API (getConfig answers 404): read-only, drift is flagged, never written"
	if !strings.HasPrefix(text.String(), line+"\n") {
		t.Errorf("text report does not open with %q:\n%s", line, text.String())
	}
	if !strings.Contains(rep.Summary(), "(read-only: no Delta API)") {
		t.Errorf("summary: %s", rep.Summary())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ReadOnly []string `json:"read_only"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || !cmp.Equal(doc.ReadOnly, []string{line}) {
		t.Errorf("json read_only %v (%v)", doc.ReadOnly, err)
	}

	// The next cycle goes to the classic API at once.
	e.srv.ResetRequests()
	rep = r.Sync(ctx)
	if n, paths := deltaRequests(e.srv); n != 0 {
		t.Errorf("second cycle sent %d Delta API requests:\n%s", n, strings.Join(paths, "\n"))
	}
	if c := rep.Counts(); c.Unchanged != 1 || c.Flagged != 1 || c.Failed != 0 {
		t.Errorf("second cycle: %s", rep.Summary())
	}
	if e.updates() != 0 {
		t.Errorf("read-only cycles sent updates")
	}
}

// TestReadOnlyFaithfulTablesHaveNoDrift: every corpus table registered
// faithfully diffs empty when read through the classic API too.
func TestReadOnlyFaithfulTablesHaveNoDrift(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	n := 0
	for _, src := range okTables(t) {
		name := tableID(src)
		dir := filepath.Join(t.TempDir(), name)
		copyLog(t, src, dir, -1)
		snap := snapshot(t, dir)
		if _, err := kindOf(e.client).Registration(e.name(name), "file://"+dir, sync.LogStateOf(snap, "file://"+dir)); err != nil {
			continue
		}
		if _, err := sync.Register(ctx, kindOf(e.client), snap, e.name(name), "file://"+dir); err != nil {
			t.Fatalf("%s: register: %v", src, err)
		}
		n++
	}
	e.srv.SetDeltaAPI(false)
	rep := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}).Sync(ctx)
	if got := rep.Count(sync.OutcomeUnchanged); got != n || n < 30 {
		for _, r := range rep.Results {
			if r.Outcome != sync.OutcomeUnchanged {
				t.Errorf("%s: %s %s: %s %v", r.Table, r.Outcome, r.Status, r.Reason, r.Plan)
			}
		}
		t.Fatalf("%d of %d tables unchanged through the classic API", got, n)
	}
}

// TestReadOnlyVendsClassicCredentials: with vended credentials, a catalog
// without the Delta API is asked by table id through the classic
// generateTemporaryTableCredentials (uctest has no handler for it, so the
// table fails, naming the request).
func TestReadOnlyVendsClassicCredentials(t *testing.T) {
	e := uctestEnv(t)
	e.register("basic_partitioned", "t", -1)
	tb, _ := e.srv.Table(e.name("t").String())
	e.srv.SetDeltaAPI(false)
	e.srv.ResetRequests()
	rep := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}}},
		func(o *sync.Options) { o.VendedCredentials = true }).Sync(context.Background())
	if len(rep.Results) != 1 || rep.Results[0].Outcome != sync.OutcomeFailed ||
		!strings.Contains(rep.Results[0].Reason, "generateTemporaryTableCredentials") {
		t.Fatalf("results: %+v", rep.Results)
	}
	var sent []string
	for _, r := range e.srv.Requests() {
		if strings.HasSuffix(r.Path, "/temporary-table-credentials") {
			sent = append(sent, string(r.Body))
		}
		if strings.HasSuffix(r.Path, "/credentials") && strings.Contains(r.Path, "/delta/v1/") {
			t.Errorf("Delta API credentials asked: %s", r.Path)
		}
	}
	if len(sent) != 1 || !strings.Contains(sent[0], tb.UUID) || !strings.Contains(sent[0], `"READ"`) {
		t.Errorf("classic credential requests %q, want one for table id %s", sent, tb.UUID)
	}
}

// TestDeltaAPIPresent pins what the read-only fallback assumes of a server
// with the Delta API (the real one when DELTASYNC_UC_URL is set): getConfig
// answers, and a missing table's 404 names itself (NoSuchTableException),
// so no getConfig is sent for it and nothing is handled read-only.
func TestDeltaAPIPresent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.client.Config(ctx, e.catalog); err != nil {
		t.Fatalf("getConfig: %v", err)
	}
	_, err := e.client.LoadTable(ctx, e.name("no_such_table"))
	var ae *uc.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || !strings.HasPrefix(ae.Type, "NoSuch") {
		t.Fatalf("loadTable of a missing table: %v", err)
	}
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{e.name("no_such_table").String()}}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.reconciler(nil, func(o *sync.Options) { o.Selector = sel })
	rep := r.Sync(ctx)
	if len(rep.Results) != 1 || rep.Results[0].Outcome != sync.OutcomeFailed || len(rep.ReadOnly) != 0 {
		t.Errorf("missing table: %+v, read-only %v", rep.Results, rep.ReadOnly)
	}
}
