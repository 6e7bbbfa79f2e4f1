package uc_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
)

// These tests run the Unity Catalog kind (uc.Kind) against the
// spec-validating in-memory server: what sync asks of a catalog.Kind.

// kindEnv is a uctest server with schema main.s, a client whose
// requests pass through intercept when it is set, and the kind.
type kindEnv struct {
	srv *uctest.Server
	c   *uc.Client
	k   *uc.Kind

	mu stdsync.Mutex
	// intercept answers a request instead of the server when it returns
	// a response or an error; forward sends it on.
	intercept func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error)
	readOnly  []string // OnReadOnly's catalogs, in order
}

func (e *kindEnv) RoundTrip(r *http.Request) (*http.Response, error) {
	e.mu.Lock()
	f := e.intercept
	e.mu.Unlock()
	forward := func() (*http.Response, error) { return http.DefaultTransport.RoundTrip(r) }
	if f == nil {
		return forward()
	}
	return f(r, forward)
}

func (e *kindEnv) setIntercept(f func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.intercept = f
}

func newKindEnv(t *testing.T, opts ...uctest.Option) *kindEnv {
	t.Helper()
	e := &kindEnv{srv: spectest.NewForTest(t, opts...)}
	c, err := uc.New(e.srv.URL(), uc.Options{
		Version: "test", Token: uc.StaticToken("tok"), HTTPClient: &http.Client{Transport: e},
		Retry: uc.RetryPolicy{
			Sleep:  func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Jitter: func(d time.Duration) time.Duration { return d },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	e.k = uc.NewKind(c, uc.KindOptions{OnReadOnly: func(_ context.Context, cat string, err error) {
		if !errors.Is(err, uc.ErrNoDeltaAPI) {
			t.Errorf("OnReadOnly(%s) with %v", cat, err)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.readOnly = append(e.readOnly, cat)
	}})
	e.srv.AddSchema("main", "s")
	return e
}

func tn(table string) catalog.TableName {
	return catalog.TableName{Catalog: "main", Schema: "s", Table: table}
}

// requests counts the recorded requests of method whose path contains
// path.
func requests(srv *uctest.Server, method, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == method && strings.Contains(r.Path, path) {
			n++
		}
	}
	return n
}

// scope is a catalog.Scope over named catalogs (or all) and, when set,
// only the schemas listed.
type scope struct {
	catalogs []string
	all      bool
	schemas  []string
}

func (s scope) Catalogs() ([]string, bool) { return slices.Clone(s.catalogs), s.all }
func (s scope) MayMatchSchema(_, schema string) bool {
	return s.schemas == nil || slices.Contains(s.schemas, schema)
}
func (s scope) Wants(catalog.TableName) bool { return true }

// listed is the kind's listing of scope, by table name.
func listed(t *testing.T, k *uc.Kind, s scope) map[string]catalog.Listed {
	t.Helper()
	out := map[string]catalog.Listed{}
	if err := k.List(context.Background(), s, func(l catalog.Listed) bool { out[l.Name.String()] = l; return true }); err != nil {
		t.Fatalf("List: %v", err)
	}
	return out
}

// Load reads the Delta API record and the classic comment and storage
// location; from the listing, a record whose updated time is the listed
// updated_at takes the listing's comment and location (no getTable),
// while one that moved since is read whole.
func TestKindLoad(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	created := registerTable(t, e.c, tn("t"), mappedSchema).Metadata

	e.srv.ResetRequests()
	read, err := e.k.Load(ctx, tn("t"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if read.Comment != "registered" || read.StorageLocation != "file:///data/t" || read.ID != created.TableUUID ||
		read.Etag != created.Etag || read.Name != tn("t") || read.Protocol == nil || read.Answer != nil {
		t.Errorf("read %+v", read.Record)
	}
	if n := requests(e.srv, "GET", "/tables/main.s.t"); n != 1 {
		t.Errorf("%d getTable without a listing, want 1", n)
	}

	l := listed(t, e.k, scope{catalogs: []string{"main"}})["main.s.t"]
	if l.UpdatedAt != read.UpdatedTime || l.ID != read.ID || l.Location != "file:///data/t" || l.Comment != "registered" ||
		l.Type != uc.TableTypeExternal || l.NotDelta != "" {
		t.Fatalf("listed %+v, read %+v", l, read.Record)
	}
	l.Comment, l.Location = "as listed", "file:///listed"
	e.srv.ResetRequests()
	read, err = e.k.Load(ctx, tn("t"), &l)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests(e.srv, "GET", "/tables/main.s.t"); n != 0 || read.Comment != "as listed" || read.StorageLocation != "file:///listed" {
		t.Errorf("unchanged since listed: %d getTable, comment %q, location %q; want none and the listing's", n, read.Comment, read.StorageLocation)
	}
	l.UpdatedAt--
	read, err = e.k.Load(ctx, tn("t"), &l)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests(e.srv, "GET", "/tables/main.s.t"); n != 1 || read.Comment != "registered" {
		t.Errorf("changed since listed: %d getTable, comment %q; want 1 and the record's", n, read.Comment)
	}

	if _, err := e.k.Load(ctx, tn("nope"), nil); !errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrNotDelta) {
		t.Errorf("missing table: %v", err)
	}
	if n := requests(e.srv, "GET", "/delta/v1/config"); n != 0 || len(e.k.ReadOnlyCatalogs()) != 0 {
		t.Errorf("a missing table asked getConfig %d times, read-only %v", n, e.k.ReadOnlyCatalogs())
	}
}

// A table that is not Delta, as loadTable answers it (400
// UnsupportedTableFormatException), is an error answering
// catalog.ErrNotDelta, worded as sync flags it.
func TestKindLoadNotDelta(t *testing.T) {
	e := newKindEnv(t)
	registerTable(t, e.c, tn("p"), mappedSchema)
	if err := e.srv.MutateTable("main.s.p", func(tb *uctest.Table) { tb.Format = "PARQUET" }); err != nil {
		t.Fatal(err)
	}
	_, err := e.k.Load(context.Background(), tn("p"), nil)
	if !errors.Is(err, catalog.ErrNotDelta) || !uc.IsUnsupportedFormat(err) ||
		!strings.HasPrefix(err.Error(), "not a Delta table: catalog: loadTable: HTTP 400 UnsupportedTableFormatException") {
		t.Errorf("err = %v", err)
	}
}

// List lists the catalogs in scope, the schemas it may match, and every
// table of them (a non-Delta one with why); errors of one catalog are
// joined and the rest is listed; emit returning false stops it.
func TestKindList(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	e.srv.AddSchema("main", "other")
	e.srv.AddSchema("second", "s")
	registerTable(t, e.c, tn("a"), mappedSchema)
	registerTable(t, e.c, tn("p"), mappedSchema)
	registerTable(t, e.c, catalog.TableName{Catalog: "main", Schema: "other", Table: "o"}, mappedSchema)
	registerTable(t, e.c, catalog.TableName{Catalog: "second", Schema: "s", Table: "b"}, mappedSchema)
	if err := e.srv.MutateTable("main.s.p", func(tb *uctest.Table) { tb.Format = "PARQUET" }); err != nil {
		t.Fatal(err)
	}

	got := listed(t, e.k, scope{catalogs: []string{"main", "missing"}, schemas: []string{"s"}})
	if len(got) != 2 || got["main.s.a"].NotDelta != "" || got["main.s.p"].NotDelta != "data source format PARQUET is not Delta" {
		t.Errorf("main.s: %+v", got)
	}
	if got := listed(t, e.k, scope{all: true}); len(got) != 4 {
		t.Errorf("all catalogs: %d tables, want 4: %v", len(got), got)
	}

	n := 0
	if err := e.k.List(ctx, scope{all: true}, func(catalog.Listed) bool { n++; return false }); err != nil || n != 1 {
		t.Errorf("stopped listing: %d emitted, %v", n, err)
	}

	// A schema listing refused: that catalog is reported, the next listed.
	e.srv.FailNext(1, http.StatusForbidden)
	var names []string
	err := e.k.List(ctx, scope{catalogs: []string{"second", "main"}, schemas: []string{"s"}}, func(l catalog.Listed) bool {
		names = append(names, l.Name.String())
		return true
	})
	if err == nil || !strings.HasPrefix(err.Error(), "listing schemas of second: ") || !slices.Equal(names, []string{"main.s.a", "main.s.p"}) {
		t.Errorf("err = %v, listed %v", err, names)
	}

	// Schemas and Tables are registration's view.
	schemas, err := e.k.Schemas(ctx, "main")
	if err != nil || !schemas["s"] || !schemas["other"] {
		t.Errorf("Schemas = %v, %v", schemas, err)
	}
	if schemas, err := e.k.Schemas(ctx, "missing"); schemas != nil || err != nil {
		t.Errorf("Schemas(missing) = %v, %v", schemas, err)
	}
	var pages [][]catalog.Listed
	if err := e.k.Tables(ctx, "main", "other", func(p []catalog.Listed) error { pages = append(pages, p); return nil }); err != nil ||
		len(pages) != 1 || len(pages[0]) != 1 || pages[0][0].Location != "file:///data/o" || pages[0][0].Name.Table != "o" {
		t.Errorf("Tables = %+v, %v", pages, err)
	}
	if err := e.k.CreateSchema(ctx, catalog.TableName{Catalog: "main", Schema: "new"}); err != nil {
		t.Fatal(err)
	}
	if err := e.k.CreateSchema(ctx, catalog.TableName{Catalog: "main", Schema: "new"}); err != nil {
		t.Errorf("creating an existing schema: %v", err)
	}
}
