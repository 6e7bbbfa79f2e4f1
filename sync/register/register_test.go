package register

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
)

// These tests hold registration's decisions on their own: a host whose
// storage is a map of directories and a catalog that keeps what it is
// told. Package sync's tests run the same decisions end to end against
// the in-memory and real catalogs, with logs written by delta-rs.

// memHost is storage as a map: each directory with a log maps to its
// version (-1: a directory with no commit yet).
type memHost struct {
	mu      stdsync.Mutex
	dirs    map[string]int64 // canonical location → log version
	dryRun  bool
	warn    map[string]bool
	tracked []string
	audited []string
	listed  int
}

func (h *memHost) Resolve(loc string) (location.Location, string, error) {
	l, err := location.Parse(loc)
	if err != nil {
		return location.Location{}, "", err
	}
	if l.Bucket != "lake" {
		return location.Location{}, "", fmt.Errorf("%s refused: %w", loc, ErrOutsideAllowed)
	}
	return l, l.String(), nil
}

func (h *memHost) ListDirs(_ context.Context, loc location.Location, _ int, page func([]string) error) error {
	h.mu.Lock()
	h.listed++
	prefix := location.Canonical(loc.String()) + "/"
	var names []string
	for d := range h.dirs {
		if rest, ok := strings.CutPrefix(d, prefix); ok {
			name, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	h.mu.Unlock()
	slices.Sort(names)
	return page(names)
}

func (h *memHost) Load(_ context.Context, _ string, loc string) (catalog.LogState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.dirs[location.Canonical(loc)]
	if !ok || v < 0 {
		return catalog.LogState{}, fmt.Errorf("%s: %w", loc, deltalog.ErrNotATable)
	}
	return catalog.LogState{Version: v, Location: loc, Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`}, nil
}

func (h *memHost) Owns(string) bool                    { return true }
func (h *memHost) Recorded() map[string]string         { return nil }
func (h *memHost) Warn(n catalog.TableName) bool       { return h.warn[n.String()] }
func (h *memHost) DryRun() bool                        { return h.dryRun }
func (h *memHost) Now() time.Time                      { return time.Unix(0, 0) }
func (h *memHost) Track(n catalog.TableName, _ string) { h.tracked = append(h.tracked, n.String()) }
func (h *memHost) Audit(_ context.Context, w *catalog.Write, err error) {
	h.audited = append(h.audited, fmt.Sprintf("%s %v", w.Table, err))
}

// memKind is a catalog of schemas and tables (name → location); only the
// calls registration makes are answered.
type memKind struct {
	catalog.Kind
	schemas map[string]bool
	tables  map[string]string
	created []string
	exists  error // Register's answer when set
}

func (k *memKind) Schemas(_ context.Context, c string) (map[string]bool, error) {
	if c != "main" {
		return nil, nil
	}
	return maps.Clone(k.schemas), nil
}

func (k *memKind) Tables(_ context.Context, c, s string, fn func([]catalog.Listed) error) error {
	var page []catalog.Listed
	for name, loc := range k.tables {
		if n := strings.Split(name, "."); n[1] == s {
			page = append(page, catalog.Listed{Name: catalog.TableName{Catalog: c, Schema: s, Table: n[2]}, Location: loc})
		}
	}
	return fn(page)
}

func (k *memKind) Registration(n catalog.TableName, loc string, log catalog.LogState) (*catalog.Write, error) {
	v := log.Version
	return &catalog.Write{Table: n, Create: true, Location: loc, LogVersion: v}, nil
}

func (k *memKind) CreateSchema(_ context.Context, n catalog.TableName) error {
	k.schemas[n.Schema] = true
	return nil
}

func (k *memKind) Register(_ context.Context, w *catalog.Write) (*int64, error) {
	if k.exists != nil {
		return nil, k.exists
	}
	k.tables[w.Table.String()] = w.Location
	k.created = append(k.created, w.Table.String())
	v := w.LogVersion
	return &v, nil
}

func (k *memKind) Load(_ context.Context, n catalog.TableName, _ *catalog.Listed) (*catalog.Read, error) {
	loc, ok := k.tables[n.String()]
	if !ok {
		return nil, catalog.ErrNotFound
	}
	return &catalog.Read{Record: catalog.Record{Name: n, Location: loc}}, nil
}

func newFixture(t *testing.T, opts Options) (*Registrar, *memHost, *memKind) {
	t.Helper()
	h := &memHost{dirs: map[string]int64{
		"s3://lake/w/sales/orders":   3,
		"s3://lake/w/sales/Clients":  1, // and clients below: one name
		"s3://lake/w/sales/clients":  1,
		"s3://lake/w/sales/taken":    0, // the name is recorded elsewhere
		"s3://lake/w/sales/empty":    -1,
		"s3://lake/w/sales/moved":    2, // recorded under another name
		"s3://lake/w/hr/people":      5, // no schema hr
		"s3://lake/w/sales/Bad Name": 0,
	}, warn: map[string]bool{}}
	k := &memKind{schemas: map[string]bool{"sales": true}, tables: map[string]string{
		"main.sales.taken":  "s3://lake/elsewhere/taken",
		"main.sales.legacy": "s3://lake/w/sales/moved",
	}}
	if len(opts.Rules) == 0 {
		opts.Rules = []Rule{{Location: "s3://lake/w/{schema}/{table}", Name: "main.{schema}.{table}"}}
	}
	a, err := New(&opts, k, h)
	if err != nil {
		t.Fatal(err)
	}
	return a, h, k
}

func rowsByTable(rows []Row) map[string]Row {
	out := map[string]Row{}
	for _, r := range rows {
		out[r.Table] = r
	}
	return out
}

func problemOf(t *testing.T, r Row) *Problem {
	t.Helper()
	var p *Problem
	if !errors.As(r.Err, &p) {
		t.Fatalf("%s: error %v, want a *Problem", r.Table, r.Err)
	}
	return p
}

// TestDiscoverDecidesEachDirectory: one discovery decides every directory
// a template describes, creates only the one that is free, and a second
// discovery creates nothing.
func TestDiscoverDecidesEachDirectory(t *testing.T) {
	a, h, k := newFixture(t, Options{})
	rows, found, ran := a.Discover(context.Background())
	if !ran {
		t.Fatal("the first discovery did not run")
	}
	got := rowsByTable(rows)
	if r := got["main.sales.orders"]; r.Outcome != Registered || r.Err != nil || r.CatalogVersion == nil || *r.CatalogVersion != 3 ||
		r.Registration == nil || r.Registration.Location != "s3://lake/w/sales/orders" || !slices.Equal(r.Registration.Columns, []string{"id long"}) {
		t.Errorf("orders: %+v, want registered at version 3 with its one column", r)
	}
	if p := problemOf(t, got["main.sales.clients"]); !p.Flagged || p.Reason != reasonConflict || !strings.Contains(p.Error(), "name collision") {
		t.Errorf("clients: %v, want a flagged name collision", p)
	}
	if p := problemOf(t, got["main.sales.taken"]); !p.Flagged || p.Reason != reasonConflict || !strings.Contains(p.Error(), "already exists at s3://lake/elsewhere/taken") {
		t.Errorf("taken: %v, want flagged: the name exists elsewhere", p)
	}
	if p := problemOf(t, got["main.hr.people"]); !p.Flagged || p.Reason != ReasonMissingSchema {
		t.Errorf("people: %v, want flagged missing_schema", p)
	}
	if r := got["main.sales.moved"]; r.Outcome != AlreadyRegistered || !strings.Contains(r.Reason, "main.sales.legacy") {
		t.Errorf("moved: %+v, want already registered as main.sales.legacy", r)
	}
	if r, ok := got["main.sales.empty"]; ok {
		t.Errorf("empty (no commit yet): %+v, want no row", r)
	}
	if r := got["main.sales.bad_name"]; r.Outcome != Registered {
		t.Errorf("a directory name normalised: %+v, want registered as bad_name", r)
	}
	if want := []string{"main.sales.bad_name", "main.sales.orders"}; !slices.Equal(k.created, want) {
		t.Errorf("created %v, want %v", k.created, want)
	}
	if len(h.audited) != 2 || !slices.Contains(h.tracked, "main.sales.orders") {
		t.Errorf("audited %v, tracked %v: want each create audited and tracked", h.audited, h.tracked)
	}
	// orders, bad_name, clients ×2... counted as tables only when a log
	// was read or the location is known: orders, bad_name, moved.
	if found != 3 {
		t.Errorf("found %d, want 3", found)
	}
	if !a.Busy("main.sales.orders") || a.Busy("main.sales.clients") {
		t.Error("Busy: want the registered table busy this cycle, the flagged one not")
	}

	rows, _, ran = a.Discover(context.Background())
	if !ran {
		t.Fatal("interval 0: the second discovery did not run")
	}
	got = rowsByTable(rows)
	if r, ok := got["main.sales.orders"]; ok {
		t.Errorf("second discovery: %+v, want no row for a table recorded under its name", r)
	}
	if len(k.created) != 2 {
		t.Errorf("second discovery created %v", k.created[2:])
	}
}

// TestDiscoverDryRunCapAndWarn: a dry run creates nothing, the cap makes
// the rest wait, a warn rule withholds its table.
func TestDiscoverDryRunCapAndWarn(t *testing.T) {
	a, h, k := newFixture(t, Options{})
	h.dryRun = true
	rows, _, _ := a.Discover(context.Background())
	if r := rowsByTable(rows)["main.sales.orders"]; r.Outcome != WouldRegister || len(k.created) != 0 || len(h.audited) != 0 {
		t.Errorf("dry run: %+v, created %v, audited %v; want would_register and nothing sent", r, k.created, h.audited)
	}

	a, h, k = newFixture(t, Options{MaxPerCycle: 1})
	h.warn["main.sales.bad_name"] = true
	rows, _, _ = a.Discover(context.Background())
	got := rowsByTable(rows)
	if r := got["main.sales.bad_name"]; r.Outcome != Withheld || r.Registration == nil {
		t.Errorf("warn rule: %+v, want withheld with what it would create", r)
	}
	if r := got["main.sales.orders"]; r.Outcome != Registered {
		t.Errorf("orders: %+v, want registered (the withheld one does not count against the cap)", r)
	}
	if !a.Busy("main.sales.bad_name") {
		t.Error("a withheld table is not busy: the cycle's listing would load it as missing")
	}
	if len(k.created) != 1 {
		t.Errorf("created %v, want one", k.created)
	}
}

// TestCreateTakenMeanwhile: a create answered "already exists" is read
// again: at the same location it is someone else's registration.
func TestCreateTakenMeanwhile(t *testing.T) {
	a, _, k := newFixture(t, Options{Rules: []Rule{{Location: "s3://lake/w/sales/orders", Name: "main.sales.orders"}}})
	k.exists = fmt.Errorf("TABLE_ALREADY_EXISTS: %w", catalog.ErrAlreadyExists)
	k.tables["main.sales.orders"] = "s3://lake/w/sales/orders"
	// The view was read before the other process created it.
	view := &catalogView{schemas: map[string]map[string]bool{"main": {"sales": true}}, byName: map[string]string{}, byLoc: map[string]string{}, listed: map[string]bool{"main.sales": true}}
	c := a.candidateAt("s3://lake/w/sales/orders")
	row, _ := a.decide(context.Background(), c, map[string][]string{}, view, nil)
	if row == nil || row.Outcome != AlreadyRegistered || !strings.Contains(row.Reason, "meanwhile") {
		t.Fatalf("row %+v, want already registered meanwhile", row)
	}
	if _, ok := a.Candidate("s3://lake/w/sales/orders"); ok {
		t.Error("the location is known now: not a candidate for events")
	}

	k.tables["main.sales.orders"] = "s3://lake/other"
	c = a.candidateAt("s3://lake/w/sales/orders")
	a.known = map[string]bool{}
	row, _ = a.decide(context.Background(), c, map[string][]string{}, view, nil)
	if p := problemOf(t, *row); !p.Flagged || p.Reason != reasonConflict || !strings.Contains(p.Error(), "created meanwhile at s3://lake/other") {
		t.Errorf("taken elsewhere: %v, want a flagged conflict", p)
	}
}

// TestTemplateRoundTrip: a location a template describes maps to its name,
// spelled as a LIST names it and as an event's root does.
func TestTemplateRoundTrip(t *testing.T) {
	h := &memHost{}
	tm, err := compile(0, Rule{Location: "s3://lake/w/{schema}/x/{table}", Name: "main.{schema}.t_{table}"}, h)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := location.Parse("s3://lake/w/Sales/x/Orders-EU")
	vals, ok := tm.match(l)
	if !ok {
		t.Fatal("no match")
	}
	n, err := tm.nameFor(vals)
	if err != nil || n.String() != "main.sales.t_orders_eu" {
		t.Errorf("name %v, %v; want main.sales.t_orders_eu", n, err)
	}
	if _, _, ok := tm.matchRoot("s3://lake/w/Sales/y/Orders-EU"); ok {
		t.Error("matchRoot: a literal segment differing matched")
	}
	if loc, _, ok := tm.matchRoot("s3://lake/w/Sales/x/Orders-EU"); !ok || loc.String() != "s3://lake/w/Sales/x/Orders-EU" {
		t.Errorf("matchRoot: %v %v", loc, ok)
	}
	var te *TemplateError
	_, err = compile(3, Rule{Location: "s3://other/{schema}/{table}", Name: "main.{schema}.{table}"}, h)
	if !errors.As(err, &te) || te.Rule != 3 || te.Field != "Location" || !strings.Contains(err.Error(), "lies outside storage.allowed_locations") {
		t.Errorf("outside the allow-list: %v", err)
	}
}
