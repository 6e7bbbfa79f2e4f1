package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// The lifetime cases: a table's log deleted and written again at the same
// path, recreated shorter than the catalog's watermark, dropped and
// registered again, or restored from a backup, seen by a daemon's
// reconciler over several cycles (ResyncInterval 1h, as deployed: the
// unchanged fast path is in play). They run against the real Unity Catalog
// server at DELTASYNC_UC_URL (uctest without it) with tables written by
// delta-rs.

// daemon is a reconciler as `deltasync run` builds it for one table.
func (e *env) daemon(table string, mutate ...func(*sync.Options)) *sync.Reconciler {
	return e.reconciler(only(e, table), append([]func(*sync.Options){func(o *sync.Options) { o.ResyncInterval = time.Hour }}, mutate...)...)
}

// cycle runs one cycle and returns the table's result.
func cycle(t *testing.T, r *sync.Reconciler, what string) sync.Result {
	t.Helper()
	rep := r.Sync(context.Background())
	if len(rep.Results) != 1 {
		t.Fatalf("%s: %d results, want 1\n%s", what, len(rep.Results), reportText(rep))
	}
	res := rep.Results[0]
	t.Logf("%s: %s/%s log v%d catalog v%d actions %v %s", what, res.Outcome, res.Status, deref(res.LogVersion), deref(res.CatalogVersion), res.Actions, res.Reason)
	return res
}

// writeAgain deletes the table directory and writes a new table there with
// delta-rs, one commit per step: the nightly "rm -rf and write again".
func writeAgain(t *testing.T, py, dir string, steps ...string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		evolve(t, py, dir, s)
	}
}

// hasColumn reports whether the catalog's columns include name.
func hasColumn(rec plan.Record, name string) bool {
	return slices.ContainsFunc(rec.Columns.Fields, func(f catalog.StructField) bool { return f.Name == name })
}

// inSyncFor runs n more cycles that must all find the table unchanged.
func inSyncFor(t *testing.T, r *sync.Reconciler, n int, what string) {
	t.Helper()
	for i := range n {
		if res := cycle(t, r, fmt.Sprintf("%s, cycle %d", what, i+1)); res.Outcome != sync.OutcomeUnchanged || res.Status != sync.StatusSynced {
			t.Fatalf("%s: cycle %d %s/%s (%s), want unchanged", what, i+1, res.Outcome, res.Status, res.Reason)
		}
	}
}

// TestLogWrittenAgainIsSyncedNextCycle: v0 deleted and written again as a
// new v0 with an extra column is synced by the daemon within the next
// cycle, and a v0..v2 log written again as v0..v3 with other columns gets
// a record that holds v3's state, watermark and columns together.
func TestLogWrittenAgainIsSyncedNextCycle(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	root := t.TempDir()
	for _, tc := range []struct {
		table         string
		before, after []string
	}{
		{"rewritten_v0", []string{"create"}, []string{"create_scored"}},
		{"rewritten_longer", []string{"create", "append", "append"}, []string{"create_scored", "append", "append", "append"}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			dir := filepath.Join(root, tc.table)
			writeAgain(t, py, dir, tc.before...)
			if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, dir), e.name(tc.table), "file://"+dir); err != nil {
				t.Fatal(err)
			}
			d := e.daemon(tc.table)
			inSyncFor(t, d, 3, "before the rewrite")

			writeAgain(t, py, dir, tc.after...)
			res := cycle(t, d, "first cycle after the rewrite")
			if res.Outcome != sync.OutcomeSynced || !slices.Contains(res.Actions, "set-columns") {
				t.Fatalf("first cycle after the rewrite: %s/%s actions %v (%s), want synced with set-columns", res.Outcome, res.Status, res.Actions, res.Reason)
			}
			rec := e.record(tc.table)
			if !hasColumn(rec, "score") {
				t.Errorf("record lacks the new log's column score: %+v", rec.Columns)
			}
			e.matchesLog(tc.table, dir)
			inSyncFor(t, d, 2, "after the rewrite")
		})
	}
}

// TestReregisteredTableGetsNewLogsColumns: the Spark connector's way of
// replacing a table: DROP TABLE, the directory written again, CREATE TABLE
// at the same location with no columns (classic API). The daemon that
// read the old log fills the new record with the new log's columns, never
// the old table's. The old log spells its schema unlike the catalog
// (respellSchema), so the daemon keeps the old schema string between
// cycles, as it does for such writers.
func TestReregisteredTableGetsNewLogsColumns(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	const table = "reregistered"
	dir := filepath.Join(t.TempDir(), table)
	writeAgain(t, py, dir, "create")
	respellSchema(t, dir)
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	d := e.daemon(table)
	inSyncFor(t, d, 2, "before the drop")
	oldID := e.record(table).ID

	if err := e.client.DeleteTable(ctx, e.name(table).String()); err != nil {
		t.Fatal(err)
	}
	writeAgain(t, py, dir, "create_scored")
	e.createClassicNoColumns(table, "file://"+dir)
	if rec := e.record(table); rec.ID == oldID || len(rec.Columns.Fields) != 0 {
		t.Fatalf("re-registered record: uuid %s (old %s), %d columns; want a new table with none",
			rec.ID, oldID, len(rec.Columns.Fields))
	}
	res := cycle(t, d, "after the re-registration")
	if res.Outcome != sync.OutcomeSynced {
		t.Fatalf("after the re-registration: %s/%s (%s), want synced", res.Outcome, res.Status, res.Reason)
	}
	if rec := e.record(table); !hasColumn(rec, "score") {
		t.Errorf("the new record got the old table's columns: %+v", rec.Columns)
	}
	e.matchesLog(table, dir)
	inSyncFor(t, d, 2, "after the re-registration")
}

// respellSchema rewrites the schemaString of the table's commit 0 with a
// space after each colon and comma: the same schema, spelled unlike the
// catalog's columns written in the log's form.
func respellSchema(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 0))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var a map[string]map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if md, ok := a["metaData"]; ok {
			s := md["schemaString"].(string)
			md["schemaString"] = strings.NewReplacer(`":`, `": `, `,"`, `, "`).Replace(s)
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			line = string(b)
		}
		out = append(out, line)
	}
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// createClassicNoColumns registers an EXTERNAL Delta table through the
// classic POST /tables with no columns, as Spark's UC connector does for
// CREATE TABLE ... LOCATION.
func (e *env) createClassicNoColumns(table, location string) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"name": table, "catalog_name": e.catalog, "schema_name": e.schema, "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": location, "columns": []any{},
	})
	resp, err := http.Post(e.client.BaseURL()+"/tables", "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("classic create of %s: %d %s", table, resp.StatusCode, out.String())
	}
}

// TestRecreatedShorterLogIsSynced: a v0..v3 table deleted and written again
// as a single v0 (a newer commit, another metaData.id) under a record whose
// watermark is 3 is a new table: the log wins. plan (a dry run, no state:
// a daemon just started) says "log was recreated" from the commit times;
// the running daemon syncs it, saying so from the metaData.id as well, and
// is in sync after.
func TestRecreatedShorterLogIsSynced(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	const table = "recreated_shorter"
	dir := filepath.Join(t.TempDir(), table)
	writeAgain(t, py, dir, "create", "append", "append", "append")
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	d := e.daemon(table)
	inSyncFor(t, d, 2, "before the rewrite")

	writeAgain(t, py, dir, "create_scored")
	plan := e.daemon(table, func(o *sync.Options) { o.DryRun = true }).Sync(context.Background())
	text := reportText(plan)
	t.Logf("plan after the rewrite:\n%s", text)
	if len(plan.Results) != 1 || !plan.Results[0].WouldUpdate || !strings.Contains(text, "log was recreated: its newest commit (version 0") {
		t.Fatalf("plan after the rewrite: want would update, saying the log was recreated:\n%s", text)
	}
	rep := d.Sync(context.Background())
	text = reportText(rep)
	t.Logf("daemon after the rewrite:\n%s", text)
	if len(rep.Results) != 1 || rep.Results[0].Outcome != sync.OutcomeSynced ||
		!strings.Contains(text, "log was recreated: metaData.id ") {
		t.Fatalf("daemon after the rewrite: want synced, saying the log was recreated (another metaData.id):\n%s", text)
	}
	rec := e.record(table)
	if v := rec.LastCommitVersion; v == nil || *v != 0 || !hasColumn(rec, "score") {
		t.Errorf("record after the rewrite: watermark %d, columns %+v; want 0 and the new log's", deref(v), rec.Columns)
	}
	e.matchesLog(table, dir)
	inSyncFor(t, d, 2, "after the rewrite")
}

// TestLogBehindCatalogStaysFlagged: the same table's log restored from a
// backup taken at v0 (same metaData.id, older commits) under a record at
// v3 is behind, not recreated: the running daemon and one just started
// both flag it with the reason and write nothing.
func TestLogBehindCatalogStaysFlagged(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	const table = "restored_backup"
	dir := filepath.Join(t.TempDir(), table)
	writeAgain(t, py, dir, "create")
	backup := filepath.Join(t.TempDir(), "backup")
	if err := os.CopyFS(backup, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		evolve(t, py, dir, "append")
	}
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	d := e.daemon(table)
	inSyncFor(t, d, 2, "before the restore")
	etag := e.record(table).Etag

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(backup)); err != nil {
		t.Fatal(err)
	}
	// (A failed table backs off: the next cycle defers it.)
	for _, r := range []struct {
		what, says string
		r          *sync.Reconciler
	}{
		{"running daemon", "same metaData.id", d},
		{"daemon just started", "not newer than the one the watermark names (version 3", e.daemon(table)},
	} {
		res := cycle(t, r.r, r.what+" after the restore")
		if res.Outcome != sync.OutcomeFailed || res.ErrorReason != sync.ReasonConflict ||
			!strings.Contains(res.Reason, "the log is behind, not another table") || !strings.Contains(res.Reason, r.says) {
			t.Fatalf("%s: %s/%s %s (%s), want failed/conflict saying the log is behind (%s)", r.what, res.Outcome, res.Status, res.ErrorReason, res.Reason, r.says)
		}
	}
	if got := e.record(table).Etag; got != etag {
		t.Errorf("the record was written (etag %s -> %s)", etag, got)
	}
}

// TestRecreatedVerdictHoldsOverCycles: when the metaData.id is the only
// evidence that a log behind the watermark is another table (its commit
// times are older than the watermark's), the verdict must not flip once
// the daemon has read the new log: the id compared is that of the log the
// record described, not of the log read last. In mode warn nothing is
// written, so every cycle meets the same question. (Before, cycle 2 said
// "same metaData.id … as the log read here before" and failed it.)
func TestRecreatedVerdictHoldsOverCycles(t *testing.T) {
	e := newEnv(t)
	const table = "recreated_id_only"
	dir := filepath.Join(t.TempDir(), table)
	schema := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`
	commit := func(v int64, id string, ts int64) {
		t.Helper()
		line := fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`+"\n", ts)
		if v == 0 {
			md, _ := json.Marshal(map[string]any{"id": id, "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
				"schemaString": schema, "partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": ts})
			line += `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" + `{"metaData":` + string(md) + "}\n"
		}
		p := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for v := range int64(4) {
		commit(v, "old-table", 1_700_000_000_000+v*1000)
	}
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, dir), e.name(table), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	warn := []sync.Rule{{Include: []string{e.name(table).String()}, Mode: sync.ModeWarn}}
	w := e.reconciler(warn, func(o *sync.Options) { o.ResyncInterval = time.Hour })
	inSyncFor(t, w, 1, "before the rewrite")
	// Written again as one v0 of another table, with an older commit time.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	commit(0, "new-table", 1_699_000_000_000)
	for i := range 3 {
		res := cycle(t, w, fmt.Sprintf("after the rewrite, cycle %d", i+1))
		if res.Plan == nil || res.Plan.Version == nil || !strings.Contains(res.Plan.Version.Recreated, "metaData.id new-table") {
			t.Fatalf("cycle %d: %s/%s %q, plan %+v: want the log judged recreated (another metaData.id)", i+1, res.Outcome, res.Status, res.Reason, res.Plan)
		}
	}
}
