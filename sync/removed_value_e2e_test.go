package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// removedChange finds the change removing field among a JSON document's
// changes (a plan's diff, a saved table's, an audit record's): its
// before side, under key ("catalog" in plans, "before" in the audit).
func removedChange(t *testing.T, changes any, field, key string) (any, bool) {
	t.Helper()
	list, _ := changes.([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["field"] == field && m["op"] == "remove" {
			return m[key], true
		}
	}
	return nil, false
}

// checkRemovedValue follows one removed property from the plan to the
// audit file: the text plan says what it was, the JSON plan and the saved
// plan carry it as the change's catalog side, and the audit record of the
// apply that removed it has it as before. It returns the saved plan read
// back. Before, every one of them had "" for it.
func checkRemovedValue(t *testing.T, rep *sync.Report, catalogURL, table, key, was string) *change.SavedPlan {
	t.Helper()
	field := "property " + key
	if text := reportText(rep); !strings.Contains(text, field+`: remove (was "`+was+`")`) {
		t.Errorf("the text plan does not say what %s was:\n%s", key, text)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas(t)["plan"], "the JSON plan", js.Bytes())
	var doc struct {
		Tables []struct {
			Table string         `json:"table"`
			Diff  map[string]any `json:"diff"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range doc.Tables {
		if tb.Table == table {
			v, ok := removedChange(t, tb.Diff["changes"], field, "catalog")
			found = ok && v == was
		}
	}
	if !found {
		t.Errorf("the JSON plan's changes do not carry %s = %q as removed:\n%s", key, was, js.String())
	}

	var buf bytes.Buffer
	if err := sync.NewSavedPlan(rep, catalogURL, kindOfURL(catalogURL), "test", time.Now()).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas(t)["saved-plan"], "the saved plan", buf.Bytes())
	var saved struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(buf.Bytes(), &saved); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, tb := range saved.Tables {
		if tb["table"] == table {
			v, ok := removedChange(t, tb["changes"], field, "catalog")
			found = ok && v == was
		}
	}
	if !found {
		t.Errorf("the saved plan does not carry %s = %q as removed:\n%s", key, was, buf.String())
	}
	sp, err := change.ReadSavedPlan(&buf, "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// checkAuditedRemoval reads the audit file: one synced record for table
// whose change removing key has before = was and after = null.
func checkAuditedRemoval(t *testing.T, path, table, key, was string) {
	t.Helper()
	recs := readAudit(t, path)
	if len(recs) != 1 {
		t.Fatalf("%d audit records, want the apply's one: %v", len(recs), recs)
	}
	r := recs[0]
	if r["outcome"] != "synced" || r["table"] != table {
		t.Fatalf("audit record %v, want %s synced", r, table)
	}
	v, ok := removedChange(t, r["changes"], "property "+key, "before")
	if !ok || v != was {
		t.Errorf("the audit record's removal of %s has before %v (found %v), want %q: %v", key, v, ok, was, r["changes"])
	}
	for _, c := range r["changes"].([]any) {
		if m := c.(map[string]any); m["op"] == "remove" && m["after"] != nil {
			t.Errorf("removal %v has an after", m)
		}
	}
}

// TestRemovedValueFromPlanToAudit: a property another writer added to a
// Unity Catalog record (uctest, or the real server with DELTASYNC_UC_URL)
// is planned as removed with its value, saved with it, and the apply's
// audit record says what was removed.
func TestRemovedValueFromPlanToAudit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.register("log-replay-latest-metadata-protocol", "rm", -1)
	e.divergeCatalog("rm", map[string]string{"owner.team": "x y"})
	rules := []sync.Rule{{Include: []string{e.name("rm").String()}}}
	rep := e.reconciler(rules, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	table := e.name("rm").String()
	sp := checkRemovedValue(t, rep, e.client.BaseURL(), table, "owner.team", "x y")

	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	ar := change.Apply(ctx, change.ApplyOptions{Catalog: kindOf(e.client), Audit: change.AuditOptions{Writer: aw, Command: "apply", Version: "test"}}, sp)
	_ = aw.Close()
	if !ar.Applied() {
		t.Fatalf("apply: not applied %v", ar.NotApplied())
	}
	if _, ok := e.record("rm").Properties["owner.team"]; ok {
		t.Fatal("owner.team still in the record after apply")
	}
	checkAuditedRemoval(t, auditPath, table, "owner.team", "x y")
}

// TestHMSRemovedValueFromPlanToAudit is TestRemovedValueFromPlanToAudit on
// a Hive Metastore (the fakes, and the real HMS 4.0.1 and 3.1.3 when set):
// a delta.* parameter the log does not have is removed, and its value is
// in the plan, the saved plan and the audit record.
func TestHMSRemovedValueFromPlanToAudit(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		ctx := context.Background()
		_, loc := logTable(t, "deletion_vectors_disabled", "rm", -1)
		e.sparkRegister("rm", loc)
		if res := resultOf(t, e.reconciler().Sync(ctx), "hive."+e.db+".rm"); res.Status != sync.StatusSynced {
			t.Fatalf("first sync: %s %s", res.Outcome, res.Reason)
		}
		e.hiveEdit("rm", map[string]string{"delta.probe.drop": "gone soon"})
		rep := e.reconciler(func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
		table := "hive." + e.db + ".rm"
		sp := checkRemovedValue(t, rep, e.url, table, "delta.probe.drop", "gone soon")

		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		aw, err := audit.Open(audit.Options{Path: auditPath})
		if err != nil {
			t.Fatal(err)
		}
		ar := change.Apply(ctx, change.ApplyOptions{Catalog: hms.NewKind(e.client, hms.KindOptions{LockWait: 2 * time.Second}),
			Audit: change.AuditOptions{Writer: aw, Command: "apply", Version: "test"}}, sp)
		_ = aw.Close()
		if !ar.Applied() {
			t.Fatalf("apply: not applied %v: %+v", ar.NotApplied(), ar.Results)
		}
		if _, ok := e.stored("rm").Parameters["delta.probe.drop"]; ok {
			t.Fatal("delta.probe.drop still in the record after apply")
		}
		checkAuditedRemoval(t, auditPath, table, "delta.probe.drop", "gone soon")
	})
}
