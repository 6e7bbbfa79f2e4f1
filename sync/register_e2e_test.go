package sync_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// Registration against the real parts: delta-rs tables and real corpus logs
// under a two-level location template, registered by a cycle, then found
// in sync by the next with nothing created and nothing sent.

// registerTable writes one table of testdata/deltars/register.py at dir.
func registerTable(t *testing.T, py, dir, kind string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, filepath.Join("testdata", "deltars", "register.py"), dir, kind).CombinedOutput()
	if err != nil {
		t.Fatalf("register.py %s %s: %v\n%s", dir, kind, err, out)
	}
}

// clusteredLog writes a one-commit log of a table clustered by region (a
// writer-features protocol with clustering and domainMetadata), as Delta
// Spark writes one; delta-rs cannot create clustered tables.
func clusteredLog(t *testing.T, dir string) {
	t.Helper()
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"region","type":"string","nullable":true,"metadata":{}},{"name":"at","type":"timestamp","nullable":true,"metadata":{}}]}`
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeCommit(t, dir, 0,
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 7,
			"writerFeatures": []string{"clustering", "domainMetadata"}}},
		map[string]any{"metaData": map[string]any{"id": "9a1f6a6e-0c4e-4d0e-9d55-0e0f6c1b2a11", "name": "clustered",
			"description": "clustered by region", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
			"schemaString": schema, "partitionColumns": []string{}, "configuration": map[string]string{"owner.team": "geo"},
			"createdTime": 1700000000000}},
		map[string]any{"domainMetadata": map[string]any{"domain": "delta.clustering",
			"configuration": `{"clusteringColumns":[["region"]]}`, "removed": false}})
}

// registerCounter counts catalog requests by operation and storage requests by op.
type registerCounter struct {
	mu      gosync.Mutex
	catalog map[string]int
	storage map[string]int
}

func newRegisterCounter() *registerCounter {
	return &registerCounter{catalog: map[string]int{}, storage: map[string]int{}}
}

func (c *registerCounter) observeCatalog(op string, _ int, _ time.Duration, _ error) {
	c.mu.Lock()
	c.catalog[op]++
	c.mu.Unlock()
}

func (c *registerCounter) observeStorage(op string, _ time.Duration, _ error) {
	c.mu.Lock()
	c.storage[op]++
	c.mu.Unlock()
}

func (c *registerCounter) reset() {
	c.mu.Lock()
	c.catalog, c.storage = map[string]int{}, map[string]int{}
	c.mu.Unlock()
}

func (c *registerCounter) get(kind map[string]int, op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return kind[op]
}

// writes are the catalog requests that change something.
func (c *registerCounter) writes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for op, n := range c.catalog {
		if strings.HasPrefix(op, "create") || strings.HasPrefix(op, "update") || strings.HasPrefix(op, "delete") {
			out[op] = n
		}
	}
	return out
}

// baseURL is the catalog the env talks to.
func (e *env) baseURL() string {
	if e.srv != nil {
		return e.srv.URL()
	}
	return os.Getenv("DELTASYNC_UC_URL")
}

// countingClient is a client of the env's catalog whose requests c counts.
func (e *env) countingClient(c *registerCounter) *uc.Client {
	e.t.Helper()
	cl, err := uc.New(e.baseURL(), uc.Options{Observer: c.observeCatalog,
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		e.t.Fatal(err)
	}
	return cl
}

func (e *env) addSchema(name string) {
	e.t.Helper()
	if e.srv != nil {
		e.srv.AddSchema(e.catalog, name)
		return
	}
	if _, err := e.client.CreateSchema(context.Background(), uc.CreateSchemaRequest{Name: name, CatalogName: e.catalog}); err != nil {
		e.t.Fatal(err)
	}
}

// in is the env seen from another schema of its catalog.
func (e *env) in(schema string) *env {
	c := *e
	c.schema = schema
	return &c
}

// registering is a reconciler with one register rule and no tables[] rule,
// counting its requests in c.
func (e *env) registering(c *registerCounter, rule register.Rule, mutate ...func(*sync.Options)) *sync.Reconciler {
	e.t.Helper()
	return e.reconciler(nil, append([]func(*sync.Options){func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(c))
		o.LogOptions = []deltalog.Option{deltalog.WithConcurrentObserver(c.observeStorage)}
		o.Register = &register.Options{Rules: []register.Rule{rule}}
		o.ResyncInterval = time.Hour
	}}, mutate...)...)
}

func resultsByTable(rep *sync.Report) map[string]sync.Result {
	out := map[string]sync.Result{}
	for _, r := range rep.Results {
		out[r.Table] = r
	}
	return out
}

func outcomesOf(rep *sync.Report) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		o := string(r.Outcome)
		if r.ErrorReason != "" {
			o += "/" + string(r.ErrorReason)
		}
		out[r.Table] = o
	}
	return out
}

// registerLake builds the tables of TestRegisterTablesUnderTemplate
// under root/<schema>/<table> and returns the table names by schema.
func registerLake(t *testing.T, py, root string) map[string][]string {
	t.Helper()
	registerTable(t, py, filepath.Join(root, "sales", "plain"), "plain")
	registerTable(t, py, filepath.Join(root, "sales", "partitioned"), "partitioned")
	registerTable(t, py, filepath.Join(root, "ops", "checkpointed"), "checkpointed")
	copyLog(t, "table-with-columnmapping-mode-name", filepath.Join(root, "ops", "colmap"), -1)
	clusteredLog(t, filepath.Join(root, "ops", "clustered"))
	// Not tables: a directory without a log, and a log with no commit yet.
	for _, d := range []string{filepath.Join(root, "ops", "stray", "data"), filepath.Join(root, "ops", "not_yet", "_delta_log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return map[string][]string{"sales": {"partitioned", "plain"}, "ops": {"checkpointed", "clustered", "colmap"}}
}

func TestRegisterTablesUnderTemplate(t *testing.T) {
	testenv.Suite(t)
	py := deltarsPython(t)
	e := newEnv(t)
	e.addSchema("sales")
	e.addSchema("ops")
	root := filepath.Join(t.TempDir(), "lake")
	tables := registerLake(t, py, root)
	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	ctx := context.Background()

	// plan: would register rows, nothing created.
	c := newRegisterCounter()
	plan := e.registering(c, rule, func(o *sync.Options) { o.DryRun = true })
	rep := plan.Sync(ctx)
	want := map[string]string{}
	for s, ts := range tables {
		for _, tb := range ts {
			want[e.catalog+"."+s+"."+tb] = string(sync.OutcomeWouldRegister)
		}
	}
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("plan outcomes = %v, want %v", got, want)
	}
	if w := c.writes(); len(w) != 0 {
		t.Fatalf("plan wrote to the catalog: %v", w)
	}
	if n := rep.Counts().WouldRegister; n != 5 || !rep.Drift() {
		t.Errorf("plan counts %d would register (drift %v), want 5 and drift", n, rep.Drift())
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Tables []struct {
			Table    string
			Outcome  string
			Register *register.Registration
		}
		Summary map[string]int
	}
	if err := json.Unmarshal([]byte(js.String()), &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.Summary["would_register"] != 5 {
		t.Errorf("JSON summary would_register = %d, want 5", parsed.Summary["would_register"])
	}
	for _, tb := range parsed.Tables {
		if tb.Outcome != "would_register" || tb.Register == nil || len(tb.Register.Columns) == 0 {
			t.Errorf("JSON row %s: outcome %q, register %+v", tb.Table, tb.Outcome, tb.Register)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{e.catalog + ".sales.partitioned (EXTERNAL, sync): would register", "partitioned by: part",
		"clustered by: region", "comment: clustered by region", "5 would register"} {
		if !strings.Contains(text.String()+rep.Summary(), w) {
			t.Errorf("plan text lacks %q:\n%s%s", w, text.String(), rep.Summary())
		}
	}

	// once: each registered, exactly as its log says.
	c.reset()
	once := e.registering(c, rule)
	rep = once.Sync(ctx)
	for k := range want {
		want[k] = string(sync.OutcomeRegistered)
	}
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("once outcomes = %v, want %v\n%v", got, want, rep.Results)
	}
	if rep.Drift() || rep.Failed() {
		t.Errorf("once: drift %v failed %v after registering everything", rep.Drift(), rep.Failed())
	}
	if got := c.writes(); got["createTable"] != 5 {
		t.Errorf("once sent %v, want 5 createTable", got)
	}
	for s, ts := range tables {
		for _, tb := range ts {
			e.in(s).matchesLog(tb, filepath.Join(root, s, tb))
		}
	}

	// A second once (a fresh process): creates nothing, sends nothing.
	c.reset()
	again := e.registering(c, rule)
	rep = again.Sync(ctx)
	for k := range want {
		want[k] = string(sync.OutcomeUnchanged)
	}
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("second once outcomes = %v, want %v", got, want)
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("second once wrote %v", w)
	}

	// Steady cycles of one daemon: discovery costs its LISTs only (one
	// per template directory), no GET for a directory already known.
	again.Sync(ctx) // verifies the tables for the fast path
	c.reset()
	rep = again.Sync(ctx)
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("steady outcomes = %v, want %v", got, want)
	}
	// root, sales, ops; then one LIST of each table's log (fast path).
	if gets, lists := c.get(c.storage, "get"), c.get(c.storage, "list"); gets != 0 || lists != 3+5 {
		t.Errorf("steady cycle: %d GETs and %d LISTs, want 0 and %d", gets, lists, 3+5)
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("steady cycle wrote %v", w)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRegisterFlagsWhatItMustNotRegister: every case where registering would
// overwrite or guess is flagged with its exact outcome and creates nothing.
func TestRegisterFlagsWhatItMustNotRegister(t *testing.T) {
	testenv.Suite(t)
	e := newEnv(t)
	e.addSchema("sales")
	e.addSchema("ops")
	root := filepath.Join(t.TempDir(), "lake")
	corpus := func(src, schema, table string) string {
		dir := filepath.Join(root, schema, table)
		copyLog(t, src, dir, -1)
		return dir
	}
	corpus("delta-0.8.0", "sales", "dup-name")
	corpus("delta-0.8.0", "sales", "Dup_Name")
	corpus("delta-0.8.0", "sales", "taken")
	moved := corpus("delta-0.8.0", "sales", "moved")
	corpus("delta-0.8.0", "nosuch", "orders")
	corpus("deltalog-invalid-protocol-version", "ops", "refused")
	corpus("basic_catalog_managed", "ops", "managed")
	corpus("delta-0.8.0", "ops", "a_first")
	corpus("delta-0.8.0", "ops", "b_second")
	// A symlink out of the allowed root is not followed: not discovered.
	outside := t.TempDir()
	copyLog(t, "delta-0.8.0", filepath.Join(outside, "t"), -1)
	if err := os.Symlink(filepath.Join(outside, "t"), filepath.Join(root, "ops", "escape")); err != nil {
		t.Fatal(err)
	}
	// taken exists at another location; moved's location is recorded as
	// sales.elsewhere.
	elsewhere := e.in("sales")
	otherDir := filepath.Join(t.TempDir(), "other")
	copyLog(t, "delta-0.8.0", otherDir, -1)
	ctx := context.Background()
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, otherDir), elsewhere.name("taken"), "file://"+otherDir); err != nil {
		t.Fatal(err)
	}
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, moved), elsewhere.name("elsewhere"), "file://"+moved); err != nil {
		t.Fatal(err)
	}

	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	c := newRegisterCounter()
	r := e.reconciler(nil, func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(c))
		o.Register = &register.Options{Rules: []register.Rule{rule}, MaxPerCycle: 1}
		pol, err := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(root) + "/**"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Storage = pol
	})
	rep := r.Sync(ctx)
	n := func(s, tb string) string { return e.catalog + "." + s + "." + tb }
	want := map[string]string{
		n("sales", "dup_name"):  "flagged/conflict", // both directories map to it
		n("sales", "taken"):     "flagged/conflict",
		n("sales", "moved"):     string(sync.OutcomeAlreadyRegistered),
		n("sales", "elsewhere"): "", // its location maps to another name: not maintained by the rule
		n("nosuch", "orders"):   "flagged/missing_schema",
		n("ops", "refused"):     "flagged/log",
		n("ops", "managed"):     "flagged/unsupported",
		n("ops", "escape"):      "",
		n("ops", "a_first"):     string(sync.OutcomeRegistered),
		n("ops", "b_second"):    string(sync.OutcomeWouldRegister), // max_per_cycle 1
	}
	got := outcomesOf(rep)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for k, w := range want {
		if k == n("sales", "dup_name") {
			continue // two rows
		}
		if got[k] != w {
			t.Errorf("%s: outcome %q, want %q", k, got[k], w)
		}
	}
	dups := 0
	for _, res := range rep.Results {
		if res.Table == n("sales", "dup_name") {
			dups++
			if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonConflict || !strings.Contains(res.Reason, "name collision") {
				t.Errorf("collision row %+v", res)
			}
		}
	}
	if dups != 2 {
		t.Errorf("%d rows for the colliding name, want 2 (one per directory): %v", dups, keys)
	}
	res := resultsByTable(rep)
	if r := res[n("sales", "moved")].Reason; !strings.Contains(r, n("sales", "elsewhere")) {
		t.Errorf("moved's reason %q does not name where it is registered", r)
	}
	if r := res[n("ops", "b_second")].Reason; !strings.Contains(r, "max_per_cycle") {
		t.Errorf("b_second's reason %q does not name the cap", r)
	}
	if !rep.Drift() {
		t.Error("a cycle with flagged candidates reports no drift (once would exit 0)")
	}
	if got := c.writes(); got["createTable"] != 1 || got["createSchema"] != 0 {
		t.Errorf("wrote %v, want one createTable", got)
	}
	if _, ok := res[n("ops", "escape")]; ok {
		t.Errorf("a symlink out of the template was discovered: %+v", res[n("ops", "escape")])
	}
	for _, tb := range [][2]string{{"sales", "dup_name"}, {"nosuch", "orders"}, {"ops", "refused"}, {"ops", "managed"}, {"ops", "escape"}, {"ops", "b_second"}, {"sales", "moved"}} {
		if ok, err := e.client.TableExists(ctx, catalog.TableName{Catalog: e.catalog, Schema: tb[0], Table: tb[1]}); err != nil || ok {
			t.Errorf("%s.%s exists (%v, %v) though it was not registered", tb[0], tb[1], ok, err)
		}
	}

	// The next cycle registers the one that waited; create_schemas
	// creates the missing schema.
	r2 := e.reconciler(nil, func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(c))
		o.Register = &register.Options{Rules: []register.Rule{rule}, CreateSchemas: true}
		pol, _ := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(root) + "/**"}, nil)
		o.Storage = pol
	})
	if e.srv == nil {
		t.Cleanup(func() { _ = e.client.DeleteTable(context.Background(), n("nosuch", "orders")) })
	}
	c.reset()
	rep = r2.Sync(ctx)
	got = outcomesOf(rep)
	for k, w := range map[string]string{n("ops", "b_second"): "registered", n("nosuch", "orders"): "registered", n("ops", "a_first"): "unchanged"} {
		if got[k] != w {
			t.Errorf("second cycle %s: %q, want %q", k, got[k], w)
		}
	}
	if w := c.writes(); w["createSchema"] != 1 || w["createTable"] != 2 {
		t.Errorf("second cycle wrote %v, want 1 createSchema and 2 createTable", w)
	}
}

// TestRegisterTemplateOutsideAllowList: a template the allow-list does not
// cover is a configuration error, before any request.
func TestRegisterTemplateOutsideAllowList(t *testing.T) {
	pol, err := sync.NewStoragePolicy([]string{"s3://lake/warehouse/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := sync.NewSelector(nil)
	c, _ := uc.New("http://127.0.0.1:1/api/2.1/unity-catalog", uc.Options{})
	for _, tc := range []struct {
		rule register.Rule
		want string
	}{
		{register.Rule{Location: "s3://other/{schema}/{table}", Name: "main.{schema}.{table}"}, "outside storage.allowed_locations"},
		{register.Rule{Location: "s3://lake/warehouse/x{schema}/{table}", Name: "main.{schema}.{table}"}, "whole path segment"},
		{register.Rule{Location: "s3://lake/warehouse/{schema}/{table}", Name: "main.{table}"}, "want catalog.schema.table"},
		{register.Rule{Location: "s3://lake/warehouse/{schema}/{table}", Name: "main.sales.{table}"}, "does not use {schema}"},
		{register.Rule{Location: "s3://lake/warehouse/{schema}/{table}", Name: "main.{db}.{table}"}, "{db} is not a variable"},
		{register.Rule{Location: "s3://lake/warehouse/{schema}/{table}", Name: "Main.{schema}.{table}"}, "not a name the catalog stores as written"},
	} {
		_, err := sync.New(sync.Options{Catalog: kindOf(c), Selector: sel, Storage: pol, Register: &register.Options{Rules: []register.Rule{tc.rule}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.rule, err, tc.want)
		}
	}
	if _, err := sync.New(sync.Options{Catalog: kindOf(c), Selector: sel, Storage: pol, Register: &register.Options{Rules: []register.Rule{
		{Location: "s3://lake/warehouse/{schema}/{table}", Name: "main.{schema}.raw_{table}"}}}}); err != nil {
		t.Errorf("a valid rule: %v", err)
	}
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{"Sales-EU": "sales_eu", "orders": "orders", "a.b c": "a_b_c", "Ünï": "_n_", "x@1": "x_1"} {
		got, err := register.NormalizeName(in)
		if err != nil || got != want {
			t.Errorf("NormalizeName(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 256)} {
		if _, err := register.NormalizeName(bad); err == nil {
			t.Errorf("NormalizeName(%q...) accepted", bad[:min(len(bad), 8)])
		}
	}
}

// TestRegisterOrphan: a record whose _delta_log is gone is flagged orphaned,
// and neither deleted nor written.
func TestRegisterOrphan(t *testing.T) {
	testenv.Suite(t)
	e := newEnv(t)
	dir := e.register("delta-0.8.0", "gone", -1)
	c := newRegisterCounter()
	r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}}}, func(o *sync.Options) { o.Catalog = kindOf(e.countingClient(c)) })
	if err := os.RemoveAll(filepath.Join(dir, "_delta_log")); err != nil {
		t.Fatal(err)
	}
	rep := r.Sync(context.Background())
	res := resultsByTable(rep)[e.name("gone").String()]
	if res.Outcome != sync.OutcomeOrphaned || res.ErrorReason != sync.ReasonOrphaned || !strings.Contains(res.Reason, "holds no Delta log") {
		t.Fatalf("result %+v, want orphaned", res)
	}
	if rep.Counts().Orphaned != 1 || !strings.Contains(rep.Summary(), "1 orphaned") || !rep.Drift() {
		t.Errorf("summary %q, drift %v", rep.Summary(), rep.Drift())
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("an orphan was written: %v", w)
	}
	if ok, err := e.client.TableExists(context.Background(), e.name("gone")); err != nil || !ok {
		t.Errorf("the orphan's record is gone (%v, %v)", ok, err)
	}
	// An empty _delta_log is the same.
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if res := resultsByTable(r.Sync(context.Background()))[e.name("gone").String()]; res.Outcome != sync.OutcomeOrphaned {
		t.Errorf("empty _delta_log: %+v", res)
	}
}

// TestRegisterFailedCreate: a create the server refuses leaves no table (the
// server's create is one transaction), and when recording the version
// after a create fails, the new table is deleted again.
func TestRegisterFailedCreate(t *testing.T) {
	testenv.Suite(t)
	e := newEnv(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	copyLog(t, "delta-0.8.0", dir, -1)
	w, err := kindOf(e.client).Registration(e.name("bad"), "file://"+dir, sync.LogStateOf(snapshot(t, dir), "file://"+dir))
	if err != nil {
		t.Fatal(err)
	}
	var req uc.CreateTableRequest
	if err := json.Unmarshal(w.Request, &req); err != nil {
		t.Fatal(err)
	}
	req.PartitionColumns = []string{"no_such_column"}
	if _, err := e.client.CreateTable(ctx, e.catalog, e.schema, req); err == nil {
		t.Fatal("the server accepted a partition column not in the columns")
	}
	if ok, err := e.client.TableExists(ctx, e.name("bad")); err != nil || ok {
		t.Fatalf("after a refused create the table exists (%v, %v)", ok, err)
	}

	// The create passes, the version update after it fails (a proxy
	// answers 500 to every updateTable): the new table is deleted again.
	root := filepath.Join(t.TempDir(), "lake")
	copyLog(t, "delta-0.8.0", filepath.Join(root, e.schema, "half"), -1)
	target, err := url.Parse(e.baseURL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/delta/v1/") && strings.Contains(r.URL.Path, "/tables/") {
			http.Error(w, `{"error":{"code":500,"message":"injected","type":"InternalServerError"}}`, http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	cl, err := uc.New(proxy.URL+target.Path, uc.Options{Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.reconciler(nil, func(o *sync.Options) {
		o.Catalog = kindOf(cl)
		o.Register = &register.Options{Rules: []register.Rule{{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}}}
	})
	rep := r.Sync(ctx)
	res := resultsByTable(rep)[e.name("half").String()]
	if res.Outcome != sync.OutcomeFailed || !strings.Contains(res.Reason, "deleted again") {
		t.Fatalf("result %+v, want failed with the table deleted again", res)
	}
	if ok, err := e.client.TableExists(ctx, e.name("half")); err != nil || ok {
		t.Errorf("half-registered table left behind (%v, %v)", ok, err)
	}
}

// copyTree uploads a local directory tree under prefix of the lake.
func (l *lake) copyTree(dir, prefix string) {
	l.t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		l.put(prefix+filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// TestRegisterOnS3: the same tables on S3 (gofakes3), registered by one cycle
// and in sync at the next; discovery's LISTs are paginated.
func TestRegisterOnS3(t *testing.T) {
	testenv.Suite(t)
	py := deltarsPython(t)
	e := newEnv(t)
	e.addSchema("sales")
	e.addSchema("ops")
	local := filepath.Join(t.TempDir(), "lake")
	tables := registerLake(t, py, local)
	l := newLake(t)
	l.copyTree(local, "w/")
	bo, _ := bucketOptions(l.location("x"))
	e.buckets = append(e.buckets, bo)
	e.allowed = append(e.allowed, "s3://lake/w/**")
	rule := register.Rule{Location: "s3://lake/w/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	c := newRegisterCounter()
	once := e.registering(c, rule, func(o *sync.Options) { o.Register.ListPageSize = 2 })
	rep := once.Sync(context.Background())
	want := map[string]string{}
	for s, ts := range tables {
		for _, tb := range ts {
			want[e.catalog+"."+s+"."+tb] = string(sync.OutcomeRegistered)
		}
	}
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("outcomes = %v, want %v\n%+v", got, want, rep.Results)
	}
	for s, ts := range tables {
		for _, tb := range ts {
			rec := e.in(s).record(tb)
			if got := rec.Location; got != "s3://lake/w/"+s+"/"+tb {
				t.Errorf("%s.%s recorded at %s", s, tb, got)
			}
		}
	}
	once.Sync(context.Background())
	c.reset()
	rep = once.Sync(context.Background())
	for k := range want {
		want[k] = string(sync.OutcomeUnchanged)
	}
	if got := outcomesOf(rep); !mapsEqual(got, want) {
		t.Fatalf("steady outcomes = %v, want %v", got, want)
	}
	// w/ (2 schemas: 1 page), sales/ (2 tables + empty page?), ops/
	// (5 directories: 3 pages), each table's log once (fast path).
	lists, gets := c.get(c.storage, "list"), c.get(c.storage, "get")
	if gets != 0 || lists > 1+2+3+5 || lists < 1+1+3+5 {
		t.Errorf("steady cycle on S3: %d LISTs, %d GETs; want %d-%d LISTs (page size 2) and no GET", lists, gets, 1+1+3+5, 1+2+3+5)
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("steady cycle wrote %v", w)
	}
}
