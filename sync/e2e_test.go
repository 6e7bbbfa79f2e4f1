package sync_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// okTables lists the corpus tables a reader must accept (manifest.tsv).
func okTables(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testcorpus.Dir(t), "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var hdr []string
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if hdr == nil {
			hdr = cols
			continue
		}
		i := slices.Index(hdr, "expected_outcome")
		if i >= 0 && i < len(cols) && cols[i] == "ok" {
			out = append(out, cols[0])
		}
	}
	return out
}

func tableID(src string) string {
	return strings.NewReplacer("-", "_", ".", "_").Replace(strings.ToLower(src))
}

// TestFaithfulRegistrationHasNoDrift is the "no false drift, ever" property:
// every readable corpus table, registered faithfully, diffs empty, and a
// sync cycle over all of them sends nothing.
func TestFaithfulRegistrationHasNoDrift(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var registered []string
	for _, src := range okTables(t) {
		name := tableID(src)
		dir := filepath.Join(t.TempDir(), name)
		copyLog(t, src, dir, -1)
		snap := snapshot(t, dir)
		if _, err := kindOf(e.client).Registration(e.name(name), "file://"+dir, sync.LogStateOf(snap, "file://"+dir)); err != nil {
			t.Logf("%s: not registrable: %v", src, err)
			continue
		}
		if _, err := sync.Register(ctx, kindOf(e.client), snap, e.name(name), "file://"+dir); err != nil {
			t.Errorf("%s: register: %v", src, err)
			continue
		}
		registered = append(registered, name)
		p := plan.Diff(sync.LogStateOf(snap, "file://"+dir), e.record(name), plan.DiffOptions{})
		if !p.Empty() {
			t.Errorf("%s: false drift %v: %+v", src, p.Kinds(), p)
		}
	}
	if len(registered) < 30 {
		t.Fatalf("only %d corpus tables registered", len(registered))
	}
	if e.srv == nil {
		return
	}
	e.srv.ResetRequests()
	rep := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}).Sync(ctx)
	if got := rep.Count(sync.OutcomeUnchanged); got != len(registered) {
		for _, r := range rep.Results {
			if r.Outcome != sync.OutcomeUnchanged {
				t.Errorf("%s: %s %s: %s", r.Table, r.Outcome, r.Status, r.Reason)
			}
		}
		t.Fatalf("%d of %d tables unchanged", got, len(registered))
	}
	if n := e.updates(); n != 0 {
		t.Errorf("in-sync cycle sent %d update requests", n)
	}
}

// TestOnceSyncsDriftAndFlagsTheRest drives the whole reconcile: drift made
// in the log and out of band in the catalog is synced in one request per
// table; the managed and warn tables are flagged and untouched; a second
// cycle sends nothing.
func TestOnceSyncsDriftAndFlagsTheRest(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	// Log moves ahead: schema evolution + protocol upgrade (v1, v2).
	evolve := e.register("log-replay-latest-metadata-protocol", "evolve", 0)
	copyLog(t, "log-replay-latest-metadata-protocol", evolve, -1)
	// Log moves ahead: a property set then changed.
	props := e.register("data-skipping-change-stats-collected-across-versions", "props", 0)
	copyLog(t, "data-skipping-change-stats-collected-across-versions", props, -1)
	// Catalog changed out of band: property changed/added, comment, protocol.
	e.register("basic_partitioned", "mutated", -1)
	mustMutate(t, e.srv, e.name("mutated").String(), func(tb *uctest.Table) {
		tb.Properties["stray"] = "x"
		tb.Properties["delta.minWriterVersion"] = "5"
		c := "set by hand"
		tb.Comment = &c
		tb.Columns.Fields = tb.Columns.Fields[:1]
	})
	// Watch-only tables that diverged.
	e.register("delta-0.8.0", "managed", -1)
	mustMutate(t, e.srv, e.name("managed").String(), func(tb *uctest.Table) {
		tb.Type = "MANAGED"
		tb.Properties["stray"] = "x"
	})
	e.register("delta-0.8.0-partitioned", "warn_me", -1)
	mustMutate(t, e.srv, e.name("warn_me").String(), func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	managedBefore, _ := e.srv.Table(e.name("managed").String())
	warnBefore, _ := e.srv.Table(e.name("warn_me").String())

	rules := []sync.Rule{
		{Include: []string{e.catalog + ".s.warn_*"}, Mode: sync.ModeWarn},
		{Include: []string{e.catalog + ".*.*"}, Mode: sync.ModeSync},
	}
	e.srv.ResetRequests()
	rep := e.reconciler(rules).Sync(ctx)
	want := map[string]sync.Outcome{"evolve": sync.OutcomeSynced, "props": sync.OutcomeSynced,
		"mutated": sync.OutcomeSynced, "managed": sync.OutcomeFlagged, "warn_me": sync.OutcomeFlagged}
	got := map[string]sync.Outcome{}
	for _, r := range rep.Results {
		got[strings.TrimPrefix(r.Table, e.catalog+".s.")] = r.Outcome
		if r.Outcome == sync.OutcomeSynced && len(r.Actions) == 0 {
			t.Errorf("%s synced without actions", r.Table)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s\n%s", diff, reportText(rep))
	}
	if n := e.updates(); n != 3 {
		t.Errorf("sent %d update requests, want exactly one per synced table (3)", n)
	}
	// The catalog now matches the log (Delta load + classic get).
	for _, tc := range []struct{ table, dir string }{{"evolve", evolve}, {"props", props}} {
		p := plan.Diff(sync.LogStateOf(snapshot(t, tc.dir), "file://"+tc.dir), e.record(tc.table), plan.DiffOptions{})
		if !p.Empty() {
			t.Errorf("%s still differs: %v", tc.table, p.Kinds())
		}
	}
	ti, err := e.client.GetTable(ctx, e.name("evolve").String())
	if err != nil {
		t.Fatal(err)
	}
	if names := columnNames(ti.Columns); !slices.Contains(names, "col2") {
		t.Errorf("evolve columns %v, want col2 added", names)
	}
	mut := e.record("mutated")
	if mut.Comment != "" || mut.Properties["stray"] != "" || mut.Properties["delta.minWriterVersion"] != "2" {
		t.Errorf("mutated not restored: comment %q props %v", mut.Comment, mut.Properties)
	}
	// Watch-only tables untouched.
	for _, before := range []uctest.Table{managedBefore, warnBefore} {
		after, _ := e.srv.Table(before.FullName())
		if after.Etag != before.Etag {
			t.Errorf("%s was written (etag %s -> %s)", before.FullName(), before.Etag, after.Etag)
		}
	}
	// Second cycle: nothing to send.
	e.srv.ResetRequests()
	rep2 := e.reconciler(rules).Sync(ctx)
	if n := e.updates(); n != 0 {
		t.Errorf("second cycle sent %d update requests, want 0\n%s", n, reportText(rep2))
	}
	if rep2.Count(sync.OutcomeUnchanged) != 3 || rep2.Count(sync.OutcomeFlagged) != 2 {
		t.Errorf("second cycle: %s", rep2.Summary())
	}
}

func mustMutate(t testing.TB, s *uctest.Server, name string, fn func(*uctest.Table)) {
	t.Helper()
	if err := s.MutateTable(name, fn); err != nil {
		t.Fatal(err)
	}
}

func columnNames(cols []uc.ColumnInfo) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

func reportText(rep *sync.Report) string {
	var b strings.Builder
	_ = rep.WriteText(&b)
	return b.String()
}

// TestOnceAgainstServer runs against uctest or, with DELTASYNC_UC_URL set,
// the real Unity Catalog server: drift written into the logs is synced in
// one cycle, and a second cycle leaves every etag untouched.
func TestOnceAgainstServer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dirs := map[string]string{}
	for table, src := range map[string]string{
		"evolve": "log-replay-latest-metadata-protocol",
		"props":  "data-skipping-change-stats-collected-across-versions",
		"data":   "basic_partitioned",
	} {
		dirs[table] = e.register(src, table, 0)
		copyLog(t, src, dirs[table], -1)
	}
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}}}
	rep := e.reconciler(rules).Sync(ctx)
	if rep.Count(sync.OutcomeSynced) != 3 || rep.Failed() {
		t.Fatalf("first cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	etags := map[string]string{}
	for table, dir := range dirs {
		rec := e.record(table)
		etags[table] = rec.Etag
		if p := plan.Diff(sync.LogStateOf(snapshot(t, dir), "file://"+dir), rec, plan.DiffOptions{}); !p.Empty() {
			t.Errorf("%s still differs: %v", table, p.Kinds())
		}
	}
	rep = e.reconciler(rules).Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("second cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	for table := range dirs {
		if got := e.record(table).Etag; got != etags[table] {
			t.Errorf("%s: second cycle rolled the etag %s -> %s (an update was sent)", table, etags[table], got)
		}
	}
}
