package sync_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// TestDestructiveChangesHeld: under on_destructive: hold a table whose
// update carries a destructive change (here a property the log no longer
// has) is held whole: nothing sent, the record unchanged, flagged
// held: destructive with the change named, a held record in the audit
// trail; a dry run of it still carries the held update for a saved plan.
// A table with only non-destructive changes still syncs, and under sync
// (the default) the destructive change is written.
func TestDestructiveChangesHeld(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, table := range []string{"d", "n"} {
		e.register("log-replay-latest-metadata-protocol", table, -1)
	}
	e.divergeCatalog("d", map[string]string{"stray": "x"}) // the log has no stray: remove-properties, destructive
	hold := []sync.Rule{{Include: []string{e.catalog + ".s.*"}, OnDestructive: sync.OnDestructiveHold}}
	before := e.record("d").Etag
	nBefore := e.record("n").Etag
	// n: a non-destructive drift (a property the log has, changed in the catalog).
	props := e.record("n").Properties
	var key string
	for k := range props {
		if !strings.HasPrefix(k, "delta.") && k != "clusteringColumns" {
			key = k
		}
	}
	if key != "" {
		e.divergeCatalog("n", map[string]string{key: props[key] + "-edited"})
		nBefore = e.record("n").Etag
	}

	dry := e.reconciler(hold, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	sp := sync.NewSavedPlan(dry, e.client.BaseURL(), kindOfURL(e.client.BaseURL()), "test", time.Now())
	var inPlan bool
	for _, st := range sp.Tables {
		if st.Table == e.name("d").String() {
			inPlan = st.Held == sync.HeldDestructive && len(st.Actions) > 0 && len(st.Request) > 0 && st.Etag == before
		}
	}
	if !inPlan {
		t.Errorf("the saved plan of a dry run under hold lacks d's held update: %+v\n%s", sp.Tables, reportText(dry))
	}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	rep := e.reconciler(hold, func(o *sync.Options) { o.Audit = change.AuditOptions{Writer: aw, Command: "once", Version: "test"} }).Sync(ctx)
	_ = aw.Close()
	var held *sync.Result
	for i := range rep.Results {
		if strings.HasSuffix(rep.Results[i].Table, ".d") {
			held = &rep.Results[i]
		}
	}
	if held == nil || held.Held != sync.HeldDestructive || held.Outcome != sync.OutcomeFlagged || held.Status != sync.StatusOutOfSync ||
		!strings.Contains(held.Reason, "held: destructive") || !strings.Contains(held.Reason, "property stray: remove") {
		t.Fatalf("d under hold: %+v\n%s", held, reportText(rep))
	}
	if !rep.Drift() {
		t.Errorf("a held table is not drift: once would exit 0")
	}
	if got := e.record("d"); got.Etag != before || got.Properties["stray"] != "x" {
		t.Errorf("held table written: etag %s (was %s), stray %q", got.Etag, before, got.Properties["stray"])
	}
	if !strings.Contains(reportText(rep), "held, not sent: remove-properties") {
		t.Errorf("report does not say what was held:\n%s", reportText(rep))
	}
	if key != "" && e.record("n").Etag == nBefore {
		t.Errorf("n (non-destructive drift only) was not synced under hold:\n%s", reportText(rep))
	}
	var heldRecs, synced int
	for _, r := range readAudit(t, auditPath) {
		switch {
		case r["outcome"] == "held" && r["table"] == e.name("d").String():
			heldRecs++
			if r["etag_after"] != nil || r["etag_before"] != before || r["cycle"] == nil {
				t.Errorf("held record %v", r)
			}
		case r["outcome"] == "synced" && r["table"] == e.name("n").String():
			synced++
		}
	}
	if heldRecs != 1 || (key != "" && synced != 1) {
		t.Errorf("audit: %d held records for d, %d synced for n: %v", heldRecs, synced, readAudit(t, auditPath))
	}

	// Under sync, the default, the log wins.
	rep = e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}}}).Sync(ctx)
	if _, ok := e.record("d").Properties["stray"]; ok {
		t.Errorf("under sync the destructive change was not written:\n%s", reportText(rep))
	}
}
