package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// env is one end-to-end environment: a catalog (uctest, or the real server
// named by DELTASYNC_UC_URL) with one fresh catalog and schema.
type env struct {
	t       testing.TB
	srv     *uctest.Server // nil against a real server
	client  *uc.Client
	catalog string
	schema  string
	// allowed are table roots outside the temp dir that reconcilers may read.
	allowed []string
	// buckets are the driver options (an S3 test server's endpoint) of the
	// buckets its tables live in: the catalog records plain locations.
	buckets []sync.BucketOptions
}

// newEnv uses the real server at DELTASYNC_UC_URL when set, else uctest;
// with DELTASYNC_REQUIRE_UC=1 (CI) the real server is mandatory.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAt(t, realServerURL(t))
}

// realServerURL is DELTASYNC_UC_URL, which may be empty (uctest is used
// then) unless DELTASYNC_REQUIRE_UC=1, when the test fails instead.
func realServerURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("DELTASYNC_UC_URL")
	if url == "" {
		testenv.Fallback(t, testenv.UC, "DELTASYNC_UC_URL is not set: this test must run against the real Unity Catalog server (.ci/setup-uc.sh)")
	}
	return url
}

// onUCServers runs body on the in-memory uctest server and on the real
// Unity Catalog server (skipped when DELTASYNC_UC_URL is not set).
func onUCServers(t *testing.T, body func(*testing.T, *env)) {
	for _, c := range []struct {
		name string
		env  func(*testing.T) *env
	}{
		{"uctest", func(t *testing.T) *env { return uctestEnv(t) }},
		{"uc-server", func(t *testing.T) *env {
			if realServerURL(t) == "" {
				t.Skip("DELTASYNC_UC_URL is not set")
			}
			return newEnv(t)
		}},
	} {
		t.Run(c.name, func(t *testing.T) { body(t, c.env(t)) })
	}
}

// uctestEnv always uses uctest: for tests that need its knobs (MutateTable,
// FailNext, BeforeUpdate, Requests).
func uctestEnv(t testing.TB) *env {
	t.Helper()
	return newEnvAt(t, "")
}

func newEnvAt(t testing.TB, base string) *env {
	t.Helper()
	e := &env{t: t, schema: "s"}
	if base == "" {
		e.srv = spectest.NewForTest(t)
		base = e.srv.URL()
	}
	c, err := uc.New(base, uc.Options{
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	e.catalog = "cat"
	if e.srv == nil {
		var b [4]byte
		_, _ = rand.Read(b[:])
		e.catalog = "deltasync_e2e_" + hex.EncodeToString(b[:])
	}
	ctx := context.Background()
	if e.srv != nil {
		e.srv.AddCatalog(e.catalog)
		e.srv.AddSchema(e.catalog, e.schema)
	} else {
		if _, err := c.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: e.catalog}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.DeleteCatalog(context.Background(), e.catalog, true) })
		if _, err := c.CreateSchema(ctx, uc.CreateSchemaRequest{Name: e.schema, CatalogName: e.catalog}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) name(table string) catalog.TableName {
	return catalog.TableName{Catalog: e.catalog, Schema: e.schema, Table: table}
}

// copyLog copies corpus table src into dst, only log files of versions
// <= upTo (all when upTo < 0). Checkpoint pointers are left out of partial
// copies.
func copyLog(t testing.TB, src, dst string, upTo int64) {
	t.Helper()
	testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), src), dst, func(rel string) bool {
		if upTo < 0 {
			return true
		}
		base := filepath.Base(rel)
		if len(base) < 20 {
			return false // _last_checkpoint etc.
		}
		v, err := strconv.ParseInt(base[:20], 10, 64)
		return err == nil && v <= upTo
	})
}

// snapshot loads the log in dir.
func snapshot(t testing.TB, dir string) *deltalog.Snapshot {
	t.Helper()
	tbl, err := deltalog.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	s, err := tbl.Load(context.Background(), deltalog.LoadOptions{})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return s
}

// register copies a corpus table (up to a version) to a temp dir and
// registers it faithfully; it returns the table's directory.
func (e *env) register(src, table string, upTo int64) string {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), table)
	copyLog(e.t, src, dir, upTo)
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(e.t, dir), e.name(table), "file://"+dir); err != nil {
		e.t.Fatalf("register %s: %v", table, err)
	}
	return dir
}

// record reads both catalog views of a table.
func (e *env) record(table string) plan.Record {
	e.t.Helper()
	ctx := context.Background()
	lt, err := e.client.LoadTable(ctx, e.name(table))
	if err != nil {
		e.t.Fatal(err)
	}
	ti, err := e.client.GetTable(ctx, e.name(table).String())
	if err != nil {
		e.t.Fatal(err)
	}
	return uc.RecordOf(e.name(table), lt, ti.Comment, ti.StorageLocation)
}

// updates counts updateTable requests (POST to a Delta table path).
func (e *env) updates() int {
	n := 0
	for _, r := range e.srv.Requests() {
		if r.Method == "POST" && strings.Contains(r.Path, "/delta/v1/catalogs/") && !strings.HasSuffix(r.Path, "/tables") &&
			!strings.HasSuffix(r.Path, "/staging-tables") {
			n++
		}
	}
	return n
}

func (e *env) reconciler(rules []sync.Rule, mutate ...func(*sync.Options)) *sync.Reconciler {
	e.t.Helper()
	sel, err := sync.NewSelector(rules)
	if err != nil {
		e.t.Fatal(err)
	}
	// Every table here lives under the temp dir: the tests list it, as a
	// deployment lists its file:// roots.
	pol, err := sync.NewStoragePolicy(append([]string{"file://" + filepath.ToSlash(os.TempDir()) + "/**"}, e.allowed...), e.buckets)
	if err != nil {
		e.t.Fatal(err)
	}
	o := sync.Options{Catalog: kindOf(e.client), Selector: sel, Concurrency: 2, Storage: pol}
	for _, m := range mutate {
		m(&o)
	}
	r, err := sync.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// kindOf is Unity Catalog's kind over c, as cmd builds it.
func kindOf(c *uc.Client) catalog.Kind { return uc.NewKind(c, uc.KindOptions{}) }

// kindOfURL is the name of the kind a catalog URL selects, as cmd
// decides it: thrift:// is a Hive Metastore, anything else Unity Catalog.
func kindOfURL(url string) string {
	if strings.HasPrefix(strings.ToLower(url), "thrift://") {
		return "hive-metastore"
	}
	return "unity-catalog"
}
