package sync_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/metrics"
)

// heldSeries returns deltasync_table_held by table, as reg exports it.
func heldSeries(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "deltasync_table_held" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// TestAuditTrailMatchesCatalogHistory runs cycles with writes against the
// catalog (the real server when DELTASYNC_UC_URL is set) — another writer's
// edit, a cycle under hold (held: nothing sent, the record unchanged, the
// held series set), an apply of the saved plan, a cycle after it (no longer
// held), another edit and a cycle under sync — reading the record back
// through the API after every step. The UC API has no table history
// endpoint, so those read-backs are the catalog's history. From the audit
// file alone: every record's etag_before is the etag the server showed
// before its step, a synced record's etag_after the one it showed after,
// a held one's none (and the server's etag did not move); and the
// properties the audited changes leave are the record's.
func TestAuditTrailMatchesCatalogHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.register("log-replay-latest-metadata-protocol", "h", -1)
	full := e.name("h").String()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	withAudit := func(cmd string) func(*sync.Options) {
		return func(o *sync.Options) {
			o.Audit = change.AuditOptions{Writer: aw, Command: cmd, Version: "test"}
			o.Metrics = m
		}
	}
	hold := e.reconciler([]sync.Rule{{Include: []string{full}, OnDestructive: sync.OnDestructiveHold}}, withAudit("run"))

	// step is one audited write as the server saw it.
	type step struct {
		outcome      string
		before       string
		after        string // "" when the etag must not move
		removedProps []string
	}
	var want []step

	// 1: another writer adds stray (not audited: not ours).
	e.divergeCatalog("h", map[string]string{"stray": "x"})
	e1 := e.record("h").Etag

	// 2: a cycle under hold: held, nothing sent.
	rep := hold.Sync(ctx)
	if len(rep.Results) != 1 || rep.Results[0].Held != sync.HeldDestructive {
		t.Fatalf("cycle under hold: %s", reportText(rep))
	}
	if got := e.record("h"); got.Etag != e1 || got.Properties["stray"] != "x" {
		t.Fatalf("held table written: etag %s (was %s), stray %q", got.Etag, e1, got.Properties["stray"])
	}
	if got := heldSeries(t, reg); got[full] != 1 || len(got) != 1 {
		t.Errorf("deltasync_table_held after the held cycle = %v, want %s 1", got, full)
	}
	want = append(want, step{outcome: "held", before: e1})

	// 3: plan (dry run under hold: the held update is in it), then apply.
	dry := e.reconciler([]sync.Rule{{Include: []string{full}, OnDestructive: sync.OnDestructiveHold}}, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	sp := sync.NewSavedPlan(dry, e.client.BaseURL(), kindOfURL(e.client.BaseURL()), "test", time.Now())
	ar := change.Apply(ctx, change.ApplyOptions{Catalog: kindOf(e.client), Audit: change.AuditOptions{Writer: aw, Command: "apply", Version: "test"}}, sp)
	if !ar.Applied() {
		t.Fatalf("apply: not applied %v", ar.NotApplied())
	}
	e2 := e.record("h").Etag
	if e2 == e1 {
		t.Fatalf("apply did not move the etag (%s)", e2)
	}
	want = append(want, step{outcome: "synced", before: e1, after: e2, removedProps: []string{"stray"}})

	// 4: the next cycle finds it in sync: no write, no longer held.
	rep = hold.Sync(ctx)
	if rep.Results[0].Outcome != sync.OutcomeUnchanged || e.record("h").Etag != e2 {
		t.Errorf("cycle after apply: %s", reportText(rep))
	}
	if got := heldSeries(t, reg); len(got) != 0 {
		t.Errorf("deltasync_table_held after apply = %v, want no series", got)
	}

	// 5: another edit, and a cycle under sync writes it back.
	e.divergeCatalog("h", map[string]string{"stray2": "y"})
	e3 := e.record("h").Etag
	rep = e.reconciler([]sync.Rule{{Include: []string{full}}}, withAudit("once")).Sync(ctx)
	if rep.Results[0].Outcome != sync.OutcomeSynced {
		t.Fatalf("cycle under sync: %s", reportText(rep))
	}
	e4 := e.record("h").Etag
	want = append(want, step{outcome: "synced", before: e3, after: e4, removedProps: []string{"stray2"}})
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}

	// The audit file alone.
	recs := readAudit(t, auditPath)
	if len(recs) != len(want) {
		t.Fatalf("%d audit records, want %d (held, apply, sync): %v", len(recs), len(want), recs)
	}
	props := map[string]*string{} // what the audited changes leave, nil: removed
	for i, r := range recs {
		w := want[i]
		if r["table"] != full || r["outcome"] != w.outcome || r["etag_before"] != w.before {
			t.Errorf("record %d: %s %v from %v; the server: %s from %s", i, r["table"], r["outcome"], r["etag_before"], w.outcome, w.before)
		}
		switch {
		case w.after == "" && r["etag_after"] != nil:
			t.Errorf("record %d (%s) has etag_after %v; the server's etag did not move", i, w.outcome, r["etag_after"])
		case w.after != "" && r["etag_after"] != w.after:
			t.Errorf("record %d: etag_after %v, the server read back %s", i, r["etag_after"], w.after)
		}
		changes, _ := r["changes"].([]any)
		if len(changes) == 0 {
			t.Errorf("record %d lists no changes", i)
		}
		if r["outcome"] != "synced" {
			continue
		}
		for _, c := range changes {
			c := c.(map[string]any)
			if c["kind"] != "properties" {
				continue
			}
			field, _ := c["field"].(string)
			key := strings.TrimPrefix(field, "property ")
			if after, ok := c["after"].(string); ok {
				props[key] = &after
			} else {
				props[key] = nil
			}
		}
	}
	final := e.record("h")
	if final.Etag != e4 {
		t.Errorf("final etag %s, the last audited write ended at %s", final.Etag, e4)
	}
	for _, k := range []string{"stray", "stray2"} {
		if v, ok := props[k]; !ok || v != nil {
			t.Errorf("the audit trail does not record property %s removed: %v", k, props)
		}
	}
	for k, v := range props {
		got, ok := final.Properties[k]
		switch {
		case v == nil && ok:
			t.Errorf("property %s: removed per the audit trail, %q in the record", k, got)
		case v != nil && got != *v:
			t.Errorf("property %s: %q per the audit trail, %q in the record", k, *v, got)
		}
	}
}
