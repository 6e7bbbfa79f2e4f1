package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// hmsPlan makes a saved plan of a dry run over e's database and reads it
// back from its JSON, as apply would.
func hmsPlan(t *testing.T, e *hmsEnv) *change.SavedPlan {
	t.Helper()
	r := e.reconciler(func(o *sync.Options) { o.DryRun = true })
	rep := r.Sync(context.Background())
	var buf bytes.Buffer
	if err := sync.NewSavedPlan(rep, e.url, kindOfURL(e.url), "test", time.Now()).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	validate(t, schemas(t)["saved-plan"], "a Hive Metastore's saved plan", buf.Bytes())
	sp, err := change.ReadSavedPlan(&buf, "plan.json")
	if err != nil {
		t.Fatalf("the saved plan does not read back: %v\n%s", err, buf.String())
	}
	return sp
}

func applyHMS(e *hmsEnv, sp *change.SavedPlan) *change.ApplyReport {
	return change.Apply(context.Background(), change.ApplyOptions{Catalog: hms.NewKind(e.client, hms.KindOptions{LockWait: 2 * time.Second})}, sp)
}

func applied(t *testing.T, rep *change.ApplyReport, table string) change.ApplyResult {
	t.Helper()
	for _, r := range rep.Results {
		if r.Table == table {
			return r
		}
	}
	t.Fatalf("no apply result for %s", table)
	return change.ApplyResult{}
}

// TestHMSSavedPlan: plan --out on a Hive Metastore writes, per table, the
// record's identity, transient_lastDdlTime and fingerprint and the edit a
// sync would make, and sends nothing; apply sends exactly that edit to
// the record as it stands, which is then true to the log (a later sync
// finds nothing to do), with what was not deltasync's kept. A record
// another writer changed since the plan — moving transient_lastDdlTime
// (Hive's client), or leaving it as it was (a raw alter sending it back,
// as Trino's does) — is refused as stale and left as that writer left it.
func TestHMSSavedPlan(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		ctx := context.Background()
		dirOK, locOK := logTable(t, "deletion_vectors_disabled", "ok", -1)
		_, locMoved := logTable(t, "basic_partitioned", "moved", -1)
		_, locRaw := logTable(t, "basic_partitioned", "raw", -1)
		e.sparkRegister("ok", locOK)
		e.sparkRegister("moved", locMoved)
		e.sparkRegister("raw", locRaw)
		before := map[string]map[string]string{}
		for _, n := range []string{"ok", "moved", "raw"} {
			before[n] = maps.Clone(e.stored(n).Parameters)
		}
		e.takeCalls()
		sp := hmsPlan(t, e)
		if calls := e.takeCalls(); calls["alter_table_with_environment_context"] != 0 || calls["lock"] != 0 {
			t.Fatalf("plan --out wrote: calls %v", calls)
		}
		if sp.CatalogKind != hms.KindName || sp.CatalogID != change.CatalogID(e.url) || len(sp.Tables) != 3 {
			t.Fatalf("plan: kind %q, %d tables, want %q and 3", sp.CatalogKind, len(sp.Tables), hms.KindName)
		}
		for _, st := range sp.Tables {
			name := strings.TrimPrefix(st.Table, "hive."+e.db+".")
			stored := e.stored(name)
			fp, edit := hmsRequest(t, &st)
			if st.Etag != stored.Parameters[hms.KeyDDLTime] || edit == nil || fp == "" {
				t.Fatalf("%s: etag %q (stored %q), edit %v, fingerprint %q", st.Table, st.Etag, stored.Parameters[hms.KeyDDLTime], edit, fp)
			}
			if edit.Set[hms.KeyLastUpdateVersion] == "" || edit.Set[hms.KeySchema] == "" {
				t.Errorf("%s: the edit does not set the watermark and schema: %+v", st.Table, edit)
			}
			if _, ok := edit.Set[hms.KeyDDLTime]; ok {
				t.Errorf("%s: the edit sets %s, the guard's", st.Table, hms.KeyDDLTime)
			}
			if !maps.Equal(stored.Parameters, before[name]) {
				t.Errorf("%s: changed by plan --out", st.Table)
			}
		}

		// Another writer changes two of the three between plan and apply.
		e.hiveEdit("moved", map[string]string{"owner_team": "moved-key"})
		e.rawEdit("raw", map[string]string{"owner_team": "same-ddl-time"})

		rep := applyHMS(e, sp)
		if res := applied(t, rep, "hive."+e.db+".ok"); res.Outcome != audit.OutcomeSynced {
			t.Fatalf("ok: %s %s", res.Outcome, res.Reason)
		}
		checkTrue(t, e.stored("ok"), dirOK, locOK)
		for _, n := range []string{"moved", "raw"} {
			res := applied(t, rep, "hive."+e.db+"."+n)
			if res.Outcome != audit.OutcomeRefused || !strings.Contains(res.Reason, "stale") {
				t.Errorf("%s: %s %q, want refused as stale", n, res.Outcome, res.Reason)
			}
			p := e.stored(n).Parameters
			if p["owner_team"] == "" || p[hms.KeyLastUpdateVersion] != "" {
				t.Errorf("%s: after a refused apply: owner_team %q, %s %q: want the other writer's record as it left it",
					n, p["owner_team"], hms.KeyLastUpdateVersion, p[hms.KeyLastUpdateVersion])
			}
		}
		if rep.Applied() {
			t.Error("Applied() with two tables refused")
		}

		// Applied again, the plan is stale for every table: nothing sent
		// (on HMS 3 the check is made under the table lock, released).
		e.takeCalls()
		for _, res := range applyHMS(e, sp).Results {
			if res.Outcome != audit.OutcomeRefused {
				t.Errorf("second apply of %s: %s, want refused", res.Table, res.Outcome)
			}
		}
		if calls := e.takeCalls(); calls["alter_table_with_environment_context"] != 0 || calls["lock"] != calls["unlock"] {
			t.Errorf("second apply wrote (or kept a lock): calls %v", calls)
		}

		// The applied table is in sync: a cycle finds nothing to send.
		res := resultOf(t, e.reconciler().Sync(ctx), "hive."+e.db+".ok")
		if res.Outcome != sync.OutcomeUnchanged || len(res.Actions) != 0 {
			t.Errorf("a cycle after apply: %s %v, want unchanged", res.Outcome, res.Actions)
		}
	})
}

// TestHMSSavedPlanDroppedAndCreated: a table dropped and created again
// under its name between plan and apply (same parameters, another
// createTime) is another table: refused, not written.
func TestHMSSavedPlanDroppedAndCreated(t *testing.T) {
	e := newHMSEnv(t, "4.0.1", "")
	_, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
	e.sparkRegister("ev", loc)
	sp := hmsPlan(t, e)
	if len(sp.Tables) != 1 {
		t.Fatalf("%d tables in the plan", len(sp.Tables))
	}
	old := e.stored("ev")
	again := *old
	again.CreateTime = old.CreateTime + 60
	e.fake.Put(&again) // replaces it: same name, parameters and ddl time
	res := applied(t, applyHMS(e, sp), "hive."+e.db+".ev")
	if res.Outcome != audit.OutcomeRefused || !strings.Contains(res.Reason, "created again") {
		t.Fatalf("%s %q, want refused: created again", res.Outcome, res.Reason)
	}
	if e.stored("ev").Parameters[hms.KeyLastUpdateVersion] != "" {
		t.Error("the table created again was written")
	}
}

// TestHMSSavedPlanColumnsNeedReal: a plan whose edit sets HMS columns (one
// made with columns: real, or edited by hand) is not applied by a
// deltasync configured with placeholder columns, which never writes them.
func TestHMSSavedPlanColumnsNeedReal(t *testing.T) {
	e := newHMSEnv(t, "4.0.1", "")
	_, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
	e.sparkRegister("ev", loc)
	sp := hmsPlan(t, e)
	if len(sp.Tables) != 1 {
		t.Fatalf("%d tables in the plan", len(sp.Tables))
	}
	fp, edit := hmsRequest(t, &sp.Tables[0])
	edit.Columns = []hms.Column{{Name: "id", Type: "bigint"}}
	setHMSRequest(t, &sp.Tables[0], fp, edit)
	e.takeCalls()
	res := applied(t, applyHMS(e, sp), "hive."+e.db+".ev")
	if res.Outcome == audit.OutcomeSynced || !strings.Contains(res.Reason, "catalog.columns") {
		t.Fatalf("%s %q, want not applied: catalog.columns", res.Outcome, res.Reason)
	}
	if calls := e.takeCalls(); calls["alter_table_with_environment_context"] != 0 {
		t.Errorf("calls %v: something was sent", calls)
	}
}

// hmsRequest decodes a saved Hive Metastore write's request: the
// fingerprint of the record planned from and the edit.
func hmsRequest(t *testing.T, st *change.SavedTable) (string, *hms.Edit) {
	t.Helper()
	var r struct {
		Fingerprint string    `json:"record_fingerprint"`
		Edit        *hms.Edit `json:"edit"`
	}
	if err := json.Unmarshal(st.Request, &r); err != nil {
		t.Fatalf("%s: request %s: %v", st.Table, st.Request, err)
	}
	return r.Fingerprint, r.Edit
}

// setHMSRequest writes a saved write's request back, changed by hand.
func setHMSRequest(t *testing.T, st *change.SavedTable, fp string, e *hms.Edit) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"record_fingerprint": fp, "edit": e})
	if err != nil {
		t.Fatal(err)
	}
	st.Request = b
}
