package notify_test

import (
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/notify"
	"github.com/deltasync/deltasync/sync/plan"
)

func ptr[T any](v T) *T { return &v }

// schemaNotice is a synced schema change of main.s.t at log version 3.
func schemaNotice() sync.Notice {
	return sync.Notice{
		Result: sync.Result{Table: "main.s.t", Outcome: sync.OutcomeSynced, Status: sync.StatusSynced,
			Etag: "e1", LogVersion: ptr(int64(3)), Actions: []string{"set-columns"}},
		CatalogKind: uc.KindName, Location: "s3://bucket/lake/t",
		SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},` +
			`{"name":"addr","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
			`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`,
		Changes: []plan.Change{
			{Kind: plan.KindSchema, Field: "column addr", Op: plan.OpAdd, Log: "struct<city:string>", Class: plan.ClassNonDestructive},
			{Kind: plan.KindVersion, Field: "version", Op: plan.OpChange, Catalog: "2", Log: "3", Class: plan.ClassNonDestructive},
		},
	}
}

// TestEventOfOutcome: each outcome that matters is its event kind, with
// the change rows; in-sync, failed and dry-run outcomes are no event.
func TestEventOfOutcome(t *testing.T) {
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	e, ok := notify.FromNotice(schemaNotice(), "dsync-1", now)
	if !ok || e.Kind != notify.KindSynced || e.Table != "main.s.t" || e.Instance != "dsync-1" || *e.LogVersion != 3 || e.Location != "s3://bucket/lake/t" {
		t.Fatalf("synced event = %+v, %v", e, ok)
	}
	if len(e.Changes) != 1 || e.Changes[0].Field != "column addr" || e.Changes[0].Before != nil || *e.Changes[0].After != "struct<city:string>" {
		t.Fatalf("changes = %+v, want the added column alone (before null), the watermark left out", e.Changes)
	}
	for _, c := range []struct {
		res  sync.Result
		kind notify.Kind
		ok   bool
	}{
		{sync.Result{Outcome: sync.OutcomeFlagged, Held: "destructive"}, notify.KindHeld, true},
		{sync.Result{Outcome: sync.OutcomeFlagged, ErrorReason: sync.ReasonRefused}, notify.KindRefused, true},
		{sync.Result{Outcome: sync.OutcomeFlagged, ErrorReason: sync.ReasonUnsupported}, notify.KindFlagged, true},
		{sync.Result{Outcome: sync.OutcomeRegistered}, notify.KindRegistered, true},
		{sync.Result{Outcome: sync.OutcomeOrphaned}, notify.KindOrphaned, true},
		{sync.Result{Outcome: sync.OutcomeUnchanged}, "", false},
		{sync.Result{Outcome: sync.OutcomeFailed}, "", false},
		{sync.Result{Outcome: sync.OutcomeFlagged, WouldUpdate: true}, "", false},
	} {
		k, ok := notify.KindOf(c.res)
		if k != c.kind || ok != c.ok {
			t.Errorf("KindOf(%+v) = %q, %v; want %q, %v", c.res, k, ok, c.kind, c.ok)
		}
	}
}

// TestEventIDStable: resending the same outcome gives the same ID (later,
// from another process); another version, etag, kind or change does not.
func TestEventIDStable(t *testing.T) {
	now := time.Now()
	a, _ := notify.FromNotice(schemaNotice(), "a", now)
	b, _ := notify.FromNotice(schemaNotice(), "b", now.Add(time.Hour))
	if a.ID != b.ID || len(a.ID) != 32 {
		t.Fatalf("same outcome: IDs %q and %q", a.ID, b.ID)
	}
	for name, mut := range map[string]func(*sync.Notice){
		"version": func(n *sync.Notice) { n.Result.LogVersion = ptr(int64(4)) },
		"etag":    func(n *sync.Notice) { n.Result.Etag = "e2" },
		"kind":    func(n *sync.Notice) { n.Result.Held = "destructive" },
		"change":  func(n *sync.Notice) { n.Changes[0].Log = "struct<zip:string>" },
		"table":   func(n *sync.Notice) { n.Result.Table = "main.s.u" },
		"cycle of a write without etag": func(n *sync.Notice) {
			n.Result.Etag, n.Cycle = "", ptr(int64(7))
		},
	} {
		n := schemaNotice()
		mut(&n)
		c, _ := notify.FromNotice(n, "a", now)
		if c.ID == a.ID {
			t.Errorf("%s changed, ID stayed %q", name, a.ID)
		}
	}
}

// TestEventIDStandingState: without an etag, a flagged table seen again in
// another cycle is the same event (not one a cycle); a write is not.
func TestEventIDStandingState(t *testing.T) {
	n := sync.Notice{Result: sync.Result{Table: "hive.db.t", Outcome: sync.OutcomeFlagged, ErrorReason: sync.ReasonUnsupported,
		LogVersion: ptr(int64(2))}, CatalogKind: hms.KindName, Cycle: ptr(int64(1))}
	a, _ := notify.FromNotice(n, "x", time.Now())
	n.Cycle = ptr(int64(2))
	b, _ := notify.FromNotice(n, "x", time.Now())
	if a.ID != b.ID {
		t.Errorf("flagged again in cycle 2: ID %s, was %s", b.ID, a.ID)
	}
	n.Result.Outcome, n.Result.ErrorReason = sync.OutcomeSynced, ""
	c, _ := notify.FromNotice(n, "x", time.Now())
	n.Cycle = ptr(int64(3))
	d, _ := notify.FromNotice(n, "x", time.Now())
	if c.ID == d.ID {
		t.Errorf("synced in cycles 2 and 3 without etag: same ID %s", c.ID)
	}
}
