package sync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// renamedMetaData is the v0 metaData of dir with the first n top-level
// columns renamed (column-mapping id and physical name kept), as an
// engine's ALTER TABLE RENAME COLUMN writes it.
func renamedMetaData(t *testing.T, dir string, n int) (map[string]any, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "_delta_log", "00000000000000000000.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a map[string]map[string]any
		if json.Unmarshal(sc.Bytes(), &a) != nil || a["metaData"] == nil {
			continue
		}
		md := a["metaData"]
		var schema map[string]any
		if err := json.Unmarshal([]byte(md["schemaString"].(string)), &schema); err != nil {
			t.Fatal(err)
		}
		var names []string
		for i, fl := range schema["fields"].([]any) {
			m := fl.(map[string]any)
			if i < n {
				m["name"] = "renamed_" + strings.ToLower(m["name"].(string))
			}
			names = append(names, m["name"].(string))
		}
		b, _ := json.Marshal(schema)
		md["schemaString"] = string(b)
		return map[string]any{"metaData": md}, names
	}
	t.Fatal("no metaData in v0")
	return nil, nil
}

func columnNamesOf(rec plan.Record) []string {
	var out []string
	for _, f := range rec.Columns.Fields {
		out = append(out, f.Name)
	}
	return out
}

// A server with the set-columns guards of Unity Catalog PRs #1907/#1909
// takes one top-level rename per request. A column-mapped log that
// renamed three columns is then synced in four guarded requests (the
// refused first try, two single renames, then the planned update) instead
// of being refused forever; the server without the guards takes it in one.
func TestRenamesAreSentOnePerRequest(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []uctest.Option
		updates int
	}{
		{"guarded server", []uctest.Option{uctest.WithColumnRenameGuards()}, 4},
		{"0.6.0 server", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := spectest.NewForTest(t, c.opts...)
			e := newEnvAt(t, srv.URL())
			e.srv = srv
			dir := e.register("table-with-columnmapping-mode-name", "t", -1)
			md, want := renamedMetaData(t, dir, 3)
			writeCommit(t, dir, 1, md)
			before := e.updates()
			rep := e.reconciler(only(e, "t")).Sync(context.Background())
			res := rep.Results[0]
			if res.Outcome != sync.OutcomeSynced {
				t.Fatalf("%s %s: %s\n%s", res.Outcome, res.ErrorReason, res.Reason, reportText(rep))
			}
			if got := e.updates() - before; got != c.updates {
				t.Errorf("%d updateTable requests, want %d", got, c.updates)
			}
			if got := columnNamesOf(e.record("t")); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("columns %v, want %v", got, want)
			}
			if rep2 := e.reconciler(only(e, "t")).Sync(context.Background()); rep2.Results[0].Outcome != sync.OutcomeUnchanged {
				t.Errorf("second cycle: %s", reportText(rep2))
			}
		})
	}
}

// A drop on a table without column mapping cannot be split: the guarded
// server's refusal is the table's flag, and the rest of the update
// (a property) still syncs.
func TestDropWithoutColumnMappingIsFlagged(t *testing.T) {
	srv := spectest.NewForTest(t, uctest.WithColumnRenameGuards())
	e := newEnvAt(t, srv.URL())
	e.srv = srv
	dir := e.register("delta-0.8.0", "t", -1)
	writeCommit(t, dir, 2, metaData(`{"type":"struct","fields":[{"name":"other","type":"integer","nullable":true,"metadata":{}}]}`,
		"", map[string]string{"owner.team": "data"}))
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	res := rep.Results[0]
	if res.ErrorReason != sync.ReasonRefused || res.Refused == nil || res.Refused.Action != "set-columns" ||
		!strings.Contains(res.Refused.Message, "does not use column mapping") {
		t.Fatalf("%s %s refused %+v\n%s", res.Outcome, res.ErrorReason, res.Refused, reportText(rep))
	}
	if got := e.record("t").Properties["owner.team"]; got != "data" {
		t.Errorf("the property did not sync: %q", got)
	}
}

// A guarded server that refuses a rename step halfway (the first step
// taken, the second refused) leaves the record with one column renamed and
// its watermark where it was: it never claims the log version whose
// columns it does not hold. The table is flagged refused with the step's
// answer, and the next cycle, the server taking requests again, completes
// the renames and the watermark.
func TestRenameStepRefusedHalfway(t *testing.T) {
	srv := spectest.NewForTest(t, uctest.WithColumnRenameGuards())
	e := newEnvAt(t, srv.URL())
	e.srv = srv
	dir := e.register("table-with-columnmapping-mode-name", "t", -1)
	before := e.record("t")
	md, want := renamedMetaData(t, dir, 3)
	writeCommit(t, dir, 1, md)
	var calls atomic.Int32
	srv.BeforeUpdate(func(string) {
		if calls.Add(1) == 2 { // step 1 is being taken: refuse the next request, step 2
			srv.FailNextError(1, 400, "InvalidParameterValueException", "set-columns: injected refusal of a rename step")
		}
	})
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	res := rep.Results[0]
	if res.ErrorReason != sync.ReasonRefused || res.Refused == nil || !strings.Contains(res.Refused.Message, "injected refusal") {
		t.Fatalf("%s %s refused %+v\n%s", res.Outcome, res.ErrorReason, res.Refused, reportText(rep))
	}
	mid := e.record("t")
	if got := columnNamesOf(mid); got[0] != want[0] || got[1] == want[1] || got[2] == want[2] {
		t.Errorf("after the refused step: columns %v, want only the first renamed of %v", got, want)
	}
	if mid.LastCommitVersion == nil || before.LastCommitVersion == nil || *mid.LastCommitVersion != *before.LastCommitVersion {
		t.Errorf("watermark %v after a refused step, want %v (the version before)", mid.LastCommitVersion, before.LastCommitVersion)
	}
	srv.BeforeUpdate(nil)
	rep = e.reconciler(only(e, "t")).Sync(context.Background())
	if res := rep.Results[0]; res.Outcome != sync.OutcomeSynced {
		t.Fatalf("next cycle: %s %s: %s\n%s", res.Outcome, res.ErrorReason, res.Reason, reportText(rep))
	}
	after := e.record("t")
	if got := columnNamesOf(after); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("next cycle: columns %v, want %v", got, want)
	}
	if after.LastCommitVersion == nil || *after.LastCommitVersion != 1 {
		t.Errorf("next cycle: watermark %v, want 1", after.LastCommitVersion)
	}
}

// A name-mode table whose writer assigns no column-mapping ids (physical
// names only) renaming three columns: the plan classes each as a rename
// (matched by physical name) and the guarded server takes them in the same
// steps as with ids.
func TestRenamesByPhysicalNameAreStepped(t *testing.T) {
	srv := spectest.NewForTest(t, uctest.WithColumnRenameGuards())
	e := newEnvAt(t, srv.URL())
	e.srv = srv
	dir := e.register("table-with-columnmapping-mode-name", "t", -1)
	md, want := renamedMetaData(t, dir, 3)
	var schema map[string]any
	if err := json.Unmarshal([]byte(md["metaData"].(map[string]any)["schemaString"].(string)), &schema); err != nil {
		t.Fatal(err)
	}
	for _, f := range schema["fields"].([]any) {
		delete(f.(map[string]any)["metadata"].(map[string]any), "delta.columnMapping.id")
	}
	b, _ := json.Marshal(schema)
	md["metaData"].(map[string]any)["schemaString"] = string(b)
	writeCommit(t, dir, 1, md)
	before := e.updates()
	rep := e.reconciler(only(e, "t")).Sync(context.Background())
	res := rep.Results[0]
	if res.Outcome != sync.OutcomeSynced {
		t.Fatalf("%s %s: %s\n%s", res.Outcome, res.ErrorReason, res.Reason, reportText(rep))
	}
	renames := 0
	if res.Plan != nil {
		for _, c := range res.Plan.Changes() {
			if c.Op == plan.OpRename {
				renames++
			}
		}
	}
	if renames != 3 {
		t.Errorf("%d renames in the plan, want 3\n%s", renames, reportText(rep))
	}
	if got := e.updates() - before; got != 4 {
		t.Errorf("%d updateTable requests, want 4 (the refused try, two steps, the planned update)", got)
	}
	if got := columnNamesOf(e.record("t")); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("columns %v, want %v", got, want)
	}
}
