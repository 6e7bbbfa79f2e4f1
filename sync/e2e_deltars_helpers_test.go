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
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/plan"
)

// deltarsPython is the python with deltalake that .ci/setup-python.sh
// installs.
func deltarsPython(t *testing.T) string {
	t.Helper()
	return testenv.Getenv(t, "DELTASYNC_PYTHON", testenv.External,
		`DELTASYNC_PYTHON unset: needs a python with deltalake (eval "$(bash .ci/setup-python.sh start)")`)
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
	c, err := uc.New(srv.URL(), uc.Options{
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
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
		out[table] = e.record(table).Etag
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
	_, err = e.client.UpdateTable(ctx, e.name(table), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: lt.Metadata.TableUUID}},
		Updates:      []uc.Update{uc.SetProperties{Updates: props}},
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
	if p := plan.Diff(sync.LogStateOf(snap, loc), rec, plan.DiffOptions{}); !p.Empty() {
		t.Errorf("%s differs from its log at v%d: %v %+v", table, snap.Version, p.Kinds(), p)
	}
	if v := rec.LastCommitVersion; rec.Type == uc.TableTypeExternal && (v == nil || *v != snap.Version) {
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
		if ti.Properties[k] != v || rec.Properties[k] != v {
			t.Errorf("%s: property %s: log %q, classic %q, Delta %q", table, k, v, ti.Properties[k], rec.Properties[k])
		}
	}
	for _, k := range gone {
		_, classic := ti.Properties[k]
		_, delta := rec.Properties[k]
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
	e.allowed = append(e.allowed, location.Normalize(st.Location)) // managed storage lies outside the temp dir
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
	if _, err := e.client.CreateTable(ctx, e.catalog, e.schema, uc.CreateTableRequest{
		Name: table, Location: st.Location, TableType: uc.TableTypeManaged, Comment: description,
		Columns: cols, PartitionColumns: []string{}, Protocol: st.RequiredProtocol, Properties: props, LastCommitTimestampMs: now,
	}); err != nil {
		t.Fatalf("create MANAGED %s: %v", table, err)
	}
	e.matchesLog(table, dir)
}

// proxy sits in front of a real server and lets another writer in just
// before the first updateTable request for one table is forwarded.
type proxy struct {
	client   *uc.Client   // talks to the server through the proxy
	mu       gosync.Mutex // guards bodies and statuses
	bodies   []string     // of the updateTable requests, in order
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
	c, err := uc.New(srv.URL+base.Path, uc.Options{
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
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
