package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
)

// TestDeltaRSTablesEndToEnd is the end-to-end proof with tables written by
// delta-rs (testdata/deltars/evolve.py): two EXTERNAL tables and one
// MANAGED table are registered, delta-rs evolves the external ones (a new
// column, a property set and one unset, a protocol upgrade, a new
// description), one sync cycle makes both catalog views match the logs, a
// second cycle sends nothing, a diverged MANAGED record is only flagged, and
// a concurrent writer costs a reload and re-plan, not a lost update.
//
// It runs against uctest, or the real server at DELTASYNC_UC_URL.
func TestDeltaRSTablesEndToEnd(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	root := t.TempDir()

	// 1. Two EXTERNAL tables created by delta-rs and registered from their
	// logs, and one MANAGED table created the way an engine does.
	external := []string{"orders", "customers"}
	dirs := map[string]string{}
	for _, table := range external {
		dirs[table] = filepath.Join(root, table)
		evolve(t, py, dirs[table], "create")
		if _, err := sync.Register(ctx, e.client, snapshot(t, dirs[table]), e.name(table), "file://"+dirs[table]); err != nil {
			t.Fatalf("register %s: %v", table, err)
		}
		e.matchesLog(table, dirs[table])
	}
	const managed = "events"
	e.createManaged(managed)

	// 2. delta-rs evolves the external tables, one commit per step.
	for table, steps := range map[string][]string{
		"orders":    {"add_column", "set_property", "unset_property", "upgrade_protocol", "set_description"},
		"customers": {"append", "set_property", "unset_property", "add_column", "set_description"},
	} {
		for _, step := range steps {
			evolve(t, py, dirs[table], step)
		}
	}
	orders := snapshot(t, dirs["orders"])
	if orders.Version != 5 || !slices.Contains(orders.Protocol.WriterFeatures, "deletionVectors") ||
		orders.Metadata.Description != "orders described at v5" || orders.Metadata.Configuration["owner.team"] != "analytics" ||
		!strings.Contains(orders.Metadata.SchemaString, `"score"`) {
		t.Fatalf("delta-rs did not evolve orders as planned: v%d %+v %+v", orders.Version, orders.Protocol, orders.Metadata)
	}

	// 3. One cycle in sync mode: both external tables synced in one request
	// each, the in-sync MANAGED table left alone.
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}}
	e.resetRequests()
	rep := e.reconciler(rules).Sync(ctx)
	want := map[string]sync.Outcome{"orders": sync.OutcomeSynced, "customers": sync.OutcomeSynced, managed: sync.OutcomeUnchanged}
	if diff := cmp.Diff(want, outcomes(e, rep)); diff != "" {
		t.Fatalf("first cycle outcomes (-want +got):\n%s\n%s", diff, reportText(rep))
	}
	wantActions := []string{"set-columns", "set-properties", "remove-properties", "set-protocol", "set-table-comment",
		"update-metadata-snapshot-version"}
	for _, r := range rep.Results {
		t.Logf("first cycle: %s %s/%s v%d actions %v", r.Table, r.Outcome, r.Status, deref(r.LogVersion), r.Actions)
		if strings.HasSuffix(r.Table, ".orders") {
			for _, a := range wantActions {
				if !slices.Contains(r.Actions, a) {
					t.Errorf("orders synced with %v, missing %s", r.Actions, a)
				}
			}
		}
	}
	if e.srv != nil {
		if n := e.updates(); n != 2 {
			t.Errorf("first cycle sent %d update requests, want one per external table (2)", n)
		}
	}
	for _, table := range external {
		e.matchesLog(table, dirs[table], "delta.deletedFileRetentionDuration")
	}

	// 4. A second cycle sends nothing: no updateTable request, no etag rolled.
	tables := append(slices.Clone(external), managed)
	etags := e.etags(tables)
	e.resetRequests()
	rep = e.reconciler(rules).Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 3 {
		t.Fatalf("second cycle: %s\n%s", rep.Summary(), reportText(rep))
	}
	if e.srv != nil {
		if n := e.updates(); n != 0 {
			t.Errorf("second cycle sent %d update requests, want 0", n)
		}
	}
	if diff := cmp.Diff(etags, e.etags(tables)); diff != "" {
		t.Errorf("second cycle rolled etags (-before +after):\n%s", diff)
	}

	// 5. The MANAGED record diverges from its log: flagged, never written.
	e.divergeCatalog(managed, map[string]string{"owner.team": "edited-in-the-catalog"})
	etags = e.etags(tables)
	e.resetRequests()
	rep = e.reconciler(rules).Sync(ctx)
	want = map[string]sync.Outcome{"orders": sync.OutcomeUnchanged, "customers": sync.OutcomeUnchanged, managed: sync.OutcomeFlagged}
	if diff := cmp.Diff(want, outcomes(e, rep)); diff != "" {
		t.Fatalf("after the MANAGED record diverged (-want +got):\n%s\n%s", diff, reportText(rep))
	}
	for _, r := range rep.Results {
		t.Logf("after divergence: %s %s/%s %s", r.Table, r.Outcome, r.Status, r.Reason)
		if strings.HasSuffix(r.Table, "."+managed) && (r.Status != sync.StatusOutOfSync || len(r.Actions) > 0) {
			t.Errorf("MANAGED table: %s %s actions %v (%s), want OutOfSync with nothing sent", r.Outcome, r.Status, r.Actions, r.Reason)
		}
	}
	if e.srv != nil {
		if n := e.updates(); n != 0 {
			t.Errorf("sent %d update requests, want 0 (MANAGED is watch-only)", n)
		}
	}
	if diff := cmp.Diff(etags, e.etags(tables)); diff != "" {
		t.Errorf("a table was written (-before +after):\n%s", diff)
	}

	// 6. A concurrent writer changes the record between the reconciler's
	// load and its update: 409, reload, re-plan, success.
	evolve(t, py, dirs["customers"], "upgrade_protocol")
	e.concurrentWriter(rules, "customers", dirs["customers"])
}

// concurrentWriter makes another writer set a catalog-only property just
// before the reconciler's first updateTable for table reaches the server
// (uctest: BeforeUpdate; a real server: a reverse proxy in front of it),
// then checks that the reconciler reloaded and re-planned.
func (e *env) concurrentWriter(rules []sync.Rule, table, dir string) {
	t := e.t
	ctx := context.Background()
	const key = "other.writer"
	var fired atomic.Bool
	var updates func() ([]string, []int)
	var rec *sync.Reconciler
	if e.srv != nil {
		e.srv.BeforeUpdate(func(name string) {
			if name == e.name(table).String() && fired.CompareAndSwap(false, true) {
				mustMutate(t, e.srv, name, func(tb *uctest.Table) { tb.Properties[key] = "was here" })
			}
		})
		e.srv.ResetRequests()
		updates = func() ([]string, []int) { return e.updateBodies(), nil }
		rec = e.reconciler(rules)
	} else {
		p := e.interloper(table, func() {
			fired.Store(true)
			if err := e.setProperties(table, map[string]string{key: "was here"}); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		})
		updates = p.updates
		rec = e.reconciler(rules, func(o *sync.Options) { o.Catalog = p.client })
	}
	rep := rec.Sync(ctx)
	var res *sync.Result
	for i := range rep.Results {
		if rep.Results[i].Table == e.name(table).String() {
			res = &rep.Results[i]
		}
	}
	if !fired.Load() || res == nil || res.Outcome != sync.OutcomeSynced || res.Attempts != 2 {
		t.Fatalf("concurrent writer (fired %v): want %s synced on the 2nd attempt\n%s", fired.Load(), table, reportText(rep))
	}
	b, statuses := updates()
	t.Logf("concurrent writer: %s %s after %d attempts, %d updateTable requests, statuses %v (uctest records none)",
		res.Table, res.Outcome, res.Attempts, len(b), statuses)
	if len(b) != 2 {
		t.Fatalf("%d updateTable requests, want 2 (one 409, then one re-planned from a reload)", len(b))
	}
	if statuses != nil && !cmp.Equal(statuses, []int{http.StatusConflict, http.StatusOK}) {
		t.Errorf("updateTable statuses %v, want [409 200]", statuses)
	}
	// The first request was planned before the other writer's change, the
	// second after reloading it (the log wins: the catalog-only key goes).
	if strings.Contains(b[0], key) || !strings.Contains(b[1], key) {
		t.Errorf("second request was not re-planned from a reload:\n%s\n%s", b[0], b[1])
	}
	for i, body := range b {
		var req catalog.UpdateTableRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(req.Requirements, func(r catalog.Requirement) bool { return r.RequirementType() == "assert-etag" }) {
			t.Errorf("request %d has no assert-etag: a blind overwrite", i+1)
		}
		if !slices.ContainsFunc(req.Updates, func(u catalog.Update) bool { return u.Action() == "set-protocol" }) {
			t.Errorf("request %d does not carry the protocol upgrade: %s", i+1, body)
		}
	}
	e.matchesLog(table, dir, key)
}

// deltarsPython is the python with deltalake that .ci/setup-python.sh
// installs.
func deltarsPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("DELTASYNC_PYTHON")
	if py == "" {
		why := `DELTASYNC_PYTHON unset: needs a python with deltalake (eval "$(bash .ci/setup-python.sh start)")`
		if os.Getenv("DELTASYNC_REQUIRE_EXTERNAL") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return py
}

// evolve runs one evolve.py step (one delta-rs commit) on the table at dir.
func evolve(t *testing.T, py, dir, step string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, filepath.Join("testdata", "deltars", "evolve.py"), dir, step).CombinedOutput()
	if err != nil {
		t.Fatalf("evolve.py %s %s: %v\n%s", filepath.Base(dir), step, err, out)
	}
}

// deltarsEnv is newEnv, with managed storage in a temp dir on uctest (a
// real server allocates its own).
func deltarsEnv(t *testing.T) *env {
	t.Helper()
	if realServerURL(t) != "" {
		return newEnv(t)
	}
	srv := spectest.NewForTest(t, uctest.WithManagedStorageRoot("file://"+filepath.ToSlash(t.TempDir())))
	c, err := catalog.New(srv.URL(), catalog.Options{
		Retry: catalog.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, client: c, catalog: "cat", schema: "s"}
	srv.AddCatalog(e.catalog)
	srv.AddSchema(e.catalog, e.schema)
	return e
}

func (e *env) resetRequests() {
	if e.srv != nil {
		e.srv.ResetRequests()
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func outcomes(e *env, rep *sync.Report) map[string]sync.Outcome {
	got := map[string]sync.Outcome{}
	for _, r := range rep.Results {
		got[strings.TrimPrefix(r.Table, e.catalog+"."+e.schema+".")] = r.Outcome
	}
	return got
}

func (e *env) etags(tables []string) map[string]string {
	out := map[string]string{}
	for _, table := range tables {
		out[table] = e.record(table).Table.Metadata.Etag
	}
	return out
}

// divergeCatalog sets properties on the catalog record out of band.
func (e *env) divergeCatalog(table string, props map[string]string) {
	e.t.Helper()
	if e.srv != nil {
		mustMutate(e.t, e.srv, e.name(table).String(), func(tb *uctest.Table) {
			for k, v := range props {
				tb.Properties[k] = v
			}
		})
		return
	}
	if err := e.setProperties(table, props); err != nil {
		e.t.Fatalf("diverging %s: %v", table, err)
	}
}

// setProperties is another writer's set-properties update, sent straight
// to the server.
func (e *env) setProperties(table string, props map[string]string) error {
	ctx := context.Background()
	lt, err := e.client.LoadTable(ctx, e.name(table))
	if err != nil {
		return err
	}
	_, err = e.client.UpdateTable(ctx, e.name(table), catalog.UpdateTableRequest{
		Requirements: []catalog.Requirement{catalog.AssertTableUUID{UUID: lt.Metadata.TableUUID}},
		Updates:      []catalog.Update{catalog.SetProperties{Updates: props}},
	})
	return err
}

// matchesLog checks, through both APIs, that the catalog's record of table
// is what its log says; gone are keys that must not be in the catalog.
func (e *env) matchesLog(table, dir string, gone ...string) {
	t := e.t
	t.Helper()
	snap := snapshot(t, dir)
	loc := "file://" + dir
	rec := e.record(table)
	// Delta API: nothing left to plan.
	if p := sync.Diff(sync.LogStateOf(snap, loc), rec, sync.DiffOptions{}); !p.Empty() {
		t.Errorf("%s differs from its log at v%d: %v %+v", table, snap.Version, p.Kinds(), p)
	}
	if v := rec.Table.Metadata.LastCommitVersion; rec.Table.Metadata.TableType == catalog.TableTypeExternal && (v == nil || *v != snap.Version) {
		t.Errorf("%s: catalog watermark %d, log version %d", table, deref(v), snap.Version)
	}
	// Classic API: comment, columns from type_json, properties.
	ti, err := e.client.GetTable(context.Background(), e.name(table).String())
	if err != nil {
		t.Fatal(err)
	}
	if ti.Comment != snap.Metadata.Description {
		t.Errorf("%s: classic comment %q, log description %q", table, ti.Comment, snap.Metadata.Description)
	}
	var schema struct{ Fields []map[string]any }
	if err := json.Unmarshal([]byte(snap.Metadata.SchemaString), &schema); err != nil {
		t.Fatal(err)
	}
	var logCols, catCols []map[string]any
	for _, f := range schema.Fields {
		logCols = append(logCols, map[string]any{"name": f["name"], "type": f["type"], "nullable": f["nullable"]})
	}
	for _, c := range ti.Columns {
		var f map[string]any
		if err := json.Unmarshal([]byte(c.TypeJSON), &f); err != nil {
			t.Fatalf("%s: column %s type_json %q: %v", table, c.Name, c.TypeJSON, err)
		}
		if f["name"] != c.Name {
			t.Errorf("%s: column %s has type_json named %v", table, c.Name, f["name"])
		}
		catCols = append(catCols, map[string]any{"name": f["name"], "type": f["type"], "nullable": f["nullable"]})
	}
	if diff := cmp.Diff(logCols, catCols); diff != "" {
		t.Errorf("%s: classic columns differ from the log schema (-log +catalog):\n%s", table, diff)
	}
	for k, v := range snap.Metadata.Configuration {
		if ti.Properties[k] != v || rec.Table.Metadata.Properties[k] != v {
			t.Errorf("%s: property %s: log %q, classic %q, Delta %q", table, k, v, ti.Properties[k], rec.Table.Metadata.Properties[k])
		}
	}
	for _, k := range gone {
		_, classic := ti.Properties[k]
		_, delta := rec.Table.Metadata.Properties[k]
		if classic || delta {
			t.Errorf("%s: property %s is still in the catalog (classic %v, Delta %v)", table, k, classic, delta)
		}
	}
}

// createManaged creates a catalog-managed table as an engine does: a
// staging table, version 0 of the log at the staged location with the
// required protocol and properties, then createTable.
func (e *env) createManaged(table string) {
	t := e.t
	t.Helper()
	ctx := context.Background()
	st, err := e.client.CreateStagingTable(ctx, e.catalog, e.schema, table)
	if err != nil {
		t.Fatalf("staging table: %v", err)
	}
	if !strings.HasPrefix(st.Location, "file://") {
		t.Fatalf("staging table at %s: the MANAGED part needs file:// managed storage", st.Location)
	}
	dir := strings.TrimPrefix(st.Location, "file://")
	e.allowed = append(e.allowed, sync.NormalizeLocation(st.Location)) // managed storage lies outside the temp dir
	if e.srv == nil {
		// The real server's managed storage: remove what this test wrote.
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	props := map[string]string{}
	for k, v := range st.RequiredProperties {
		if v != nil {
			props[k] = *v
		}
	}
	const schema = `{"type":"struct","fields":[{"name":"event_id","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"kind","type":"string","nullable":true,"metadata":{}}]}`
	now := time.Now().UnixMilli()
	const description = "events, catalog-managed"
	actions := []map[string]any{
		{"commitInfo": map[string]any{"timestamp": now, "inCommitTimestamp": now, "operation": "CREATE TABLE", "engineInfo": "deltasync-e2e"}},
		{"protocol": deltalog.Protocol{MinReaderVersion: st.RequiredProtocol.MinReaderVersion, MinWriterVersion: st.RequiredProtocol.MinWriterVersion,
			ReaderFeatures: st.RequiredProtocol.ReaderFeatures, WriterFeatures: st.RequiredProtocol.WriterFeatures}},
		{"metaData": deltalog.Metadata{ID: st.TableID, Description: description, Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: schema, PartitionColumns: []string{}, Configuration: props, CreatedTime: &now}},
	}
	var buf bytes.Buffer
	for _, a := range actions {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 0)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cols, err := catalog.ColumnsFromSchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateTable(ctx, e.catalog, e.schema, catalog.CreateTableRequest{
		Name: table, Location: st.Location, TableType: catalog.TableTypeManaged, Comment: description,
		Columns: cols, PartitionColumns: []string{}, Protocol: st.RequiredProtocol, Properties: props, LastCommitTimestampMs: now,
	}); err != nil {
		t.Fatalf("create MANAGED %s: %v", table, err)
	}
	e.matchesLog(table, dir)
}

// proxy sits in front of a real server and lets another writer in just
// before the first updateTable request for one table is forwarded.
type proxy struct {
	client   *catalog.Client // talks to the server through the proxy
	mu       gosync.Mutex    // guards bodies and statuses
	bodies   []string        // of the updateTable requests, in order
	statuses []int
}

func (p *proxy) updates() ([]string, []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.bodies), slices.Clone(p.statuses)
}

func (e *env) interloper(table string, interfere func()) *proxy {
	t := e.t
	base, err := url.Parse(e.client.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	host := &url.URL{Scheme: base.Scheme, Host: base.Host}
	p := &proxy{}
	isUpdate := func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/delta/v1/catalogs/") &&
			strings.HasSuffix(r.URL.Path, "/tables/"+table)
	}
	var fired atomic.Bool
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(host) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isUpdate(r) {
			rp.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if fired.CompareAndSwap(false, true) {
			interfere() // the other writer gets there first
		}
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(rw, r)
		p.mu.Lock()
		p.bodies, p.statuses = append(p.bodies, string(body)), append(p.statuses, rw.status)
		p.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	c, err := catalog.New(srv.URL+base.Path, catalog.Options{
		Retry: catalog.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.client = c
	return p
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
