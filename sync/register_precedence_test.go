package sync_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// TestExplicitWarnRuleWinsOverRegisterRule: two registered tables live
// under a register rule's template, each at the location its name maps
// to, and both logs have moved on (properties changed since the record).
// A tables[] rule names one of them with mode warn: that one keeps warn,
// flagged with its drift and never written or registered again, cycle
// after cycle; the other, which only the register rule describes, is
// maintained in mode sync and written. Without the tables[] rule (the
// reverse), the register rule alone syncs both. On uctest and on the real
// Unity Catalog server.
func TestExplicitWarnRuleWinsOverRegisterRule(t *testing.T) {
	onUCServers(t, explicitWarnWins)
}

func explicitWarnWins(t *testing.T, e *env) {
	ctx := context.Background()
	const src = "data-skipping-change-stats-collected-across-versions"
	root := filepath.Join(t.TempDir(), "lake")
	for _, table := range []string{"warned", "registered"} {
		dir := filepath.Join(root, e.schema, table)
		copyLog(t, src, dir, 1)
		if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
			t.Fatal(err)
		}
		copyLog(t, src, dir, -1) // v2..v4: properties changed
	}
	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	warned, registered := e.name("warned").String(), e.name("registered").String()
	etag := e.record("warned").Etag

	cnt := newRegisterCounter()
	explicit := []sync.Rule{{Include: []string{warned}, Mode: sync.ModeWarn}}
	d := e.reconciler(explicit, func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(cnt))
		o.Register = &register.Options{Rules: []register.Rule{rule}}
	})
	for i := range 2 {
		cnt.reset()
		res := resultsByTable(d.Sync(ctx))
		w, ok := res[warned]
		if !ok || w.Mode != sync.ModeWarn || w.Outcome != sync.OutcomeFlagged || w.Plan == nil || !w.Plan.MetadataDrift() {
			t.Fatalf("cycle %d: %s %+v, want mode warn, flagged with its drift", i+1, warned, w)
		}
		a := res[registered]
		if wantA := map[bool]sync.Outcome{true: sync.OutcomeSynced, false: sync.OutcomeUnchanged}[i == 0]; a.Mode != sync.ModeSync || a.Outcome != wantA {
			t.Fatalf("cycle %d: %s mode %s %s (%s), want mode sync %s", i+1, registered, a.Mode, a.Outcome, a.Reason, wantA)
		}
		got, n := cnt.writes(), 0
		for _, k := range got {
			n += k
		}
		if want := map[bool]int{true: 1, false: 0}[i == 0]; n != want || got["createTable"] != 0 || got["deleteTable"] != 0 {
			t.Errorf("cycle %d wrote %v, want %d update (the registered table's) and no create", i+1, got, want)
		}
	}
	if got := e.record("warned"); got.Etag != etag || deref(got.LastCommitVersion) != 1 {
		t.Errorf("%s was written: etag %s -> %s, watermark v%d", warned, etag, got.Etag, deref(got.LastCommitVersion))
	}
	if got := e.record("registered"); deref(got.LastCommitVersion) != 4 {
		t.Errorf("%s not synced: watermark v%d, want 4", registered, deref(got.LastCommitVersion))
	}

	// The reverse: the register rule alone maintains the same table in
	// mode sync, and writes it.
	r := e.reconciler(nil, func(o *sync.Options) { o.Register = &register.Options{Rules: []register.Rule{rule}} })
	if w := resultsByTable(r.Sync(ctx))[warned]; w.Mode != sync.ModeSync || w.Outcome != sync.OutcomeSynced {
		t.Fatalf("register rule alone: %s mode %s %s (%s), want mode sync, synced", warned, w.Mode, w.Outcome, w.Reason)
	}
	if got := e.record("warned"); deref(got.LastCommitVersion) != 4 {
		t.Errorf("register rule alone: %s watermark v%d, want 4", warned, deref(got.LastCommitVersion))
	}
}

// TestWarnRuleNeverRegisters: a Delta table no record names yet lies
// under a register rule's template, and a tables[] rule names the table
// it would become with mode warn. Registering is a write, and warn never
// writes: it is reported (mode warn, flagged, with what it would create
// and why not), never created, cycle after cycle; a neighbour only the
// register rule covers is registered. On uctest and the real server.
func TestWarnRuleNeverRegisters(t *testing.T) {
	onUCServers(t, warnNeverRegisters)
}

func warnNeverRegisters(t *testing.T, e *env) {
	ctx := context.Background()
	const src = "data-skipping-change-stats-collected-across-versions"
	root := filepath.Join(t.TempDir(), "lake")
	for _, table := range []string{"warned", "registered"} {
		copyLog(t, src, filepath.Join(root, e.schema, table), -1)
	}
	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	warned, registered := e.name("warned").String(), e.name("registered").String()
	cnt := newRegisterCounter()
	d := e.reconciler([]sync.Rule{{Include: []string{warned}, Mode: sync.ModeWarn}}, func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(cnt))
		o.Register = &register.Options{Rules: []register.Rule{rule}}
	})
	for i := range 2 {
		cnt.reset()
		res := resultsByTable(d.Sync(ctx))
		w, ok := res[warned]
		if !ok || w.Mode != sync.ModeWarn || w.Outcome != sync.OutcomeFlagged || w.Registration == nil || !strings.Contains(w.Reason, "warn") {
			t.Fatalf("cycle %d: %s %+v, want mode warn, flagged, with the registration it would make and why not", i+1, warned, w)
		}
		if i == 0 {
			if a := res[registered]; a.Outcome != sync.OutcomeRegistered {
				t.Fatalf("cycle 1: %s %s (%s), want registered", registered, a.Outcome, a.Reason)
			}
			if got := cnt.writes()["createTable"]; got != 1 {
				t.Errorf("cycle 1: %d createTable, want 1 (the registered table's)", got)
			}
		} else if got := cnt.writes()["createTable"]; got != 0 {
			t.Errorf("cycle %d: %d createTable, want none", i+1, got)
		}
	}
	if ok, err := e.client.TableExists(ctx, e.name("warned")); err != nil || ok {
		t.Errorf("%s exists in the catalog (%v): a warn rule's table was registered", warned, err)
	}
}
