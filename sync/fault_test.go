package sync_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// faultTables is how many tables each fault scenario keeps in sync.
const faultTables = 4

// faultRig is one fault scenario's world: a catalog (the real server at
// DELTASYNC_UC_URL, else uctest) reached through Toxiproxy and an HTTP
// fault proxy, tables in a store (optionally reached through its own pair
// of proxies), a writer, the invariant checker and a reconciler.
//
//	deltasync ─► toxiproxy ─► faultProxy ─► Unity Catalog
//	deltasync ─► toxiproxy ─► faultProxy ─► object store   (S3 rigs)
type faultRig struct {
	t        *testing.T
	env      *env
	w        *logWriter
	chk      *checker
	ucToxic  *toxiclient.Proxy
	ucFaults *faultProxy
	// storeToxic and storeFaults are set for object-store rigs.
	storeToxic  *toxiclient.Proxy
	storeFaults *faultProxy
	rec         *sync.Reconciler
	proxied     *uc.Client
	logOpts     []deltalog.Option // set by stores that need credentials
	tables      []string

	catalogAttempts, catalogFailures atomic.Int64
	storageAttempts, storageFailures atomic.Int64
	cycles                           int
	// eachCycle, if set, runs before every cycle under faults.
	eachCycle func()
}

// ucBase returns the catalog base URL for the fault tests: the real server
// when DELTASYNC_UC_URL is set, else "" (uctest).
func ucBase(t *testing.T) string {
	base := os.Getenv("DELTASYNC_UC_URL")
	if base == "" {
		testenv.Fallback(t, testenv.UC, "DELTASYNC_UC_URL unset")
	}
	return base
}

// rigStore builds the rig's store; it may register proxies with the rig.
type rigStore func(rg *faultRig) store

func fileRigStore(rg *faultRig) store { return dirStore{root: rg.t.TempDir()} }

func newFaultRig(t *testing.T, mkStore rigStore) *faultRig {
	t.Helper()
	return newFaultRigAt(t, ucBase(t), mkStore)
}

// newFaultRigAt is newFaultRig with the catalog at base ("" for uctest).
func newFaultRigAt(t *testing.T, base string, mkStore rigStore) *faultRig {
	t.Helper()
	rg := &faultRig{t: t, env: newEnvAt(t, base)}
	if rg.env.srv != nil {
		t.Log("catalog: uctest")
	}
	base = rg.env.client.BaseURL()
	rg.ucFaults = newFaultProxy(t, base)
	rg.ucToxic = toxicProxy(t, "uc", hostOf(t, rg.ucFaults.srv.URL))
	u, _ := url.Parse(base)
	u.Host = rg.ucToxic.Listen
	// One connection per request, so that a toxic's toxicity is the share
	// of requests it hits (with keep-alive, one roll per connection).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	var err error
	rg.proxied, err = uc.New(u.String(), uc.Options{
		HTTPClient: &http.Client{Transport: tr},
		Timeout:    1500 * time.Millisecond,
		Retry:      uc.RetryPolicy{MaxAttempts: 4, BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond, MaxRetryAfter: 2 * time.Second},
		Observer: func(_ string, _ int, _ time.Duration, err error) {
			rg.catalogAttempts.Add(1)
			if err != nil {
				rg.catalogFailures.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := mkStore(rg)
	rg.w = newLogWriter(t, st)
	names := map[string]catalog.TableName{}
	for i := range faultTables {
		table := fmt.Sprintf("t%d", i)
		rg.w.create(table)
		rg.register(table, names)
	}
	rg.chk = newChecker(t, rg.env.client, rg.w, names)
	rg.ucFaults.set(func() { rg.ucFaults.before = rg.chk.beforeUpdate })
	rg.logOpts = append([]deltalog.Option{deltalog.WithObserver(func(_ string, _ time.Duration, err error) {
		rg.storageAttempts.Add(1)
		if err != nil {
			rg.storageFailures.Add(1)
		}
	})}, rg.logOpts...)
	rg.rec = rg.newReconciler()
	return rg
}

// newReconciler builds a reconciler on the proxied catalog client (a fresh
// one is what a restarted process has: no snapshot kept).
func (rg *faultRig) newReconciler() *sync.Reconciler {
	t := rg.t
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{rg.env.catalog + ".s.*"}, Mode: sync.ModeSync}})
	if err != nil {
		t.Fatal(err)
	}
	// The catalog records plain locations; the store's driver options (its
	// endpoint behind the proxies) come from the policy's buckets, as in
	// production.
	var buckets []sync.BucketOptions
	if b, ok := bucketOptions(rg.w.store.url("t")); ok {
		buckets = append(buckets, b)
	}
	pol, err := sync.NewStoragePolicy(append([]string{"file://" + filepath.ToSlash(os.TempDir()) + "/**"}, sync.DefaultAllowedLocations...), buckets)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sync.New(sync.Options{
		Catalog: kindOf(rg.proxied), Selector: sel, Concurrency: 2, LogOptions: rg.logOpts, Storage: pol,
		// Failed tables are retried at the next cycle (production backs off
		// 30s and more; the recovery rule under test is the same).
		Backoff:      sync.Backoff{Initial: time.Nanosecond, Max: time.Nanosecond},
		TableTimeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	return rec
}

// addStatic imports corpus table src as table and registers it.
func (rg *faultRig) addStatic(table, src string) {
	rg.t.Helper()
	rg.w.importTable(table, src)
	rg.register(table, rg.chk.names)
}

// register records table in the catalog (directly) at its latest state.
func (rg *faultRig) register(table string, names map[string]catalog.TableName) {
	rg.t.Helper()
	ctx := context.Background()
	tbl, err := deltalog.Open(ctx, rg.w.directURL(table), directLogOptions...)
	if err != nil {
		rg.t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		rg.t.Fatal(err)
	}
	if _, err := sync.Register(ctx, kindOf(rg.env.client), snap, rg.env.name(table), catalogLocation(rg.w.store.url(table))); err != nil {
		rg.t.Fatalf("register %s: %v", table, err)
	}
	names[table] = rg.env.name(table)
	rg.tables = append(rg.tables, table)
}

// What a scenario's clearFault func returns when the proxy cannot count its
// faults: the failed attempts, or (for faults that slow rather than break)
// the catalog or storage requests made while the fault was on.
const (
	countFailures        = -1
	countCatalogAttempts = -2
	countStorageAttempts = -3
)

// scenario runs cycles with the writer committing while fault is active,
// then clears it (clearFault returns how many faults were injected, or -1 to
// count the failed attempts seen meanwhile), runs ONE more cycle, and
// checks that every table is in sync and no invariant broke.
func (rg *faultRig) scenario(name string, cycles int, inject func(), clearFault func() int) {
	t := rg.t
	ctx := context.Background()
	// A first clean cycle: everything starts in sync and stays so.
	rg.sync(ctx)
	rg.chk.start()
	cat0, sto0 := rg.catalogFailures.Load(), rg.storageFailures.Load()
	catA0, stoA0 := rg.catalogAttempts.Load(), rg.storageAttempts.Load()
	inject()
	for range cycles {
		if rg.eachCycle != nil {
			rg.eachCycle()
		}
		for _, table := range rg.tables {
			if !rg.w.tables[table].static && rand.IntN(2) == 0 {
				rg.w.step(table, "")
			}
		}
		rg.sync(ctx)
	}
	injected := clearFault()
	switch injected {
	case countFailures:
		injected = int(rg.catalogFailures.Load() - cat0 + rg.storageFailures.Load() - sto0)
	case countCatalogAttempts:
		injected = int(rg.catalogAttempts.Load() - catA0)
	case countStorageAttempts:
		injected = int(rg.storageAttempts.Load() - stoA0)
	}
	// After the faults: one cycle brings every table in sync.
	rep := rg.sync(ctx)
	for _, r := range rep.Results {
		if r.Status != sync.StatusSynced {
			t.Errorf("%s: cycle after the faults left %s %s/%s: %s", name, r.Table, r.Outcome, r.Status, r.Reason)
		}
	}
	if len(rep.Results) != len(rg.tables) || rep.Err != nil {
		t.Errorf("%s: cycle after the faults reconciled %d of %d tables (err %v, deferred %v)", name, len(rep.Results), len(rg.tables), rep.Err, rep.Deferred)
	}
	// One more poll round with the faults gone, then stop.
	time.Sleep(60 * time.Millisecond)
	rg.chk.stopPolling()
	out := rg.chk.outOfSync(ctx)
	for _, o := range out {
		t.Errorf("%s: out of sync after the faults: %s", name, o)
	}
	for _, bad := range rg.w.audit(t) {
		rg.chk.violate("%s: storage: %s", name, bad)
	}
	if rg.storeFaults != nil {
		if n := rg.storeFaults.writes.Load(); n > 0 {
			rg.chk.violate("%s: %d write requests reached the object store", name, n)
		}
	}
	if rg.chk.polls.Load() == 0 {
		t.Errorf("%s: the invariant poller never read a record", name)
	}
	if injected == 0 {
		t.Errorf("%s: no fault was injected: the scenario proves nothing", name)
	}
	for _, v := range rg.chk.violationList() {
		t.Errorf("%s: invariant violated: %s", name, v)
	}
	reportRow(t, reliabilityRow{Fault: name, Injected: injected, Cycles: rg.cycles, Violations: rg.chk.violationCount(),
		InSync: len(rg.tables) - len(out), Tables: len(rg.tables)})
}

func (rg *faultRig) sync(ctx context.Context) *sync.Report {
	rg.cycles++
	rep := rg.rec.Sync(ctx)
	rg.t.Logf("cycle %d: %s", rg.cycles, rep.Summary())
	return rep
}

// toxic adds a Toxiproxy toxic to p and returns a clearFault func that removes
// it and returns count (one of the count* constants).
func toxic(t *testing.T, p *toxiclient.Proxy, typ, stream string, toxicity float32, attrs toxiclient.Attributes, count int) (func(), func() int) {
	name := typ + "_" + stream
	return func() {
			if _, err := p.AddToxic(name, typ, stream, toxicity, attrs); err != nil {
				t.Fatalf("toxiproxy: add %s: %v", name, err)
			}
		}, func() int {
			if err := p.RemoveToxic(name); err != nil {
				t.Fatalf("toxiproxy: remove %s: %v", name, err)
			}
			return count
		}
}

// TestFaultsCatalogTCP runs deltasync against the catalog through
// Toxiproxy: latency with jitter, a bandwidth limit, connections reset
// mid-request and mid-response, and stalled connections (timeouts).
func TestFaultsCatalogTCP(t *testing.T) {
	testenv.Suite(t)
	cases := []struct {
		name     string
		typ      string
		stream   string
		toxicity float32
		attrs    toxiclient.Attributes
		count    int
	}{
		{"catalog: latency 150ms ± 100ms", "latency", "downstream", 1, toxiclient.Attributes{"latency": 150, "jitter": 100}, countCatalogAttempts},
		{"catalog: bandwidth 8 KB/s", "bandwidth", "downstream", 1, toxiclient.Attributes{"rate": 8}, countCatalogAttempts},
		{"catalog: reset mid-request", "reset_peer", "upstream", 0.3, toxiclient.Attributes{"timeout": 0}, countFailures},
		{"catalog: cut mid-response (limit_data)", "limit_data", "downstream", 0.3, toxiclient.Attributes{"bytes": 200}, countFailures},
		{"catalog: stalled request (timeout)", "timeout", "upstream", 0.3, toxiclient.Attributes{"timeout": 3000}, countFailures},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			rg := newFaultRig(t, fileRigStore)
			inject, clearFault := toxic(t, rg.ucToxic, c.typ, c.stream, c.toxicity, c.attrs, c.count)
			rg.scenario(c.name, 4, inject, clearFault)
		})
	}
}

// TestFaultsUnknownOutcome cuts the connection after updateTable reached
// the server and was applied, before the answer came back: the client
// cannot know whether the update happened. The identical resend carries the
// old etag and is refused; the reload then finds the table in sync.
func TestFaultsUnknownOutcome(t *testing.T) {
	testenv.Suite(t)
	rg := newFaultRig(t, fileRigStore)
	var armed atomic.Bool
	var cut atomic.Int64
	const name = "reset_peer_downstream"
	// Two updates may be answered at once (two workers): the toxic is
	// added by the first and removed after the last.
	var mu gosync.Mutex
	active := 0
	modify := func(r *http.Response) {
		if !armed.Load() || !isUpdateTable(r.Request) || r.StatusCode/100 != 2 {
			return
		}
		// The update is applied; reset the client's connection before
		// the answer reaches it.
		mu.Lock()
		defer mu.Unlock()
		if active == 0 {
			if _, err := rg.ucToxic.AddToxic(name, "reset_peer", "downstream", 1, toxiclient.Attributes{"timeout": 0}); err != nil {
				t.Errorf("toxiproxy: %v", err)
				return
			}
		}
		active++
		cut.Add(1)
	}
	after := func(r *http.Request, code int) {
		if !isUpdateTable(r) || code/100 != 2 {
			return
		}
		// Give the reset a moment to hit the answer, then heal.
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if active > 0 {
			if active--; active == 0 {
				_ = rg.ucToxic.RemoveToxic(name)
			}
		}
	}
	rg.ucFaults.set(func() { rg.ucFaults.modify, rg.ucFaults.after = modify, after })
	rg.scenario("catalog: cut after the update was applied (unknown outcome)", 5,
		func() { armed.Store(true) },
		func() int { armed.Store(false); return int(cut.Load()) })
}

// TestFaultsCatalogHTTP injects what a TCP proxy cannot: bursts of 5xx,
// 429 with Retry-After, and 200 answers with a truncated body (on reads,
// and on updateTable, where the update was applied).
func TestFaultsCatalogHTTP(t *testing.T) {
	testenv.Suite(t)
	cases := []struct {
		name  string
		fault httpFault
		n     int
		match func(*http.Request) bool
	}{
		{"catalog: 503 burst", httpFault{Status: 503, Body: `{"error_code":"TEMPORARILY_UNAVAILABLE","message":"burst"}`}, 10, nil},
		{"catalog: 429 with Retry-After: 1", httpFault{Status: 429, RetryAfter: "1", Body: `{"error_code":"RESOURCE_EXHAUSTED","message":"slow down"}`}, 4, nil},
		{"catalog: 200 with truncated body (reads)", httpFault{Truncate: true}, 6, func(r *http.Request) bool { return r.Method == http.MethodGet }},
		{"catalog: 200 with truncated body (updateTable, applied)", httpFault{Truncate: true}, 3, isUpdateTable},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rg := newFaultRig(t, fileRigStore)
			rg.scenario(c.name, 4, func() { rg.ucFaults.inject(c.fault, c.n, c.match) }, rg.ucFaults.stop)
		})
	}
}

// s3RigStore serves the tables from gofakes3 through Toxiproxy and a fault
// proxy; the writer and the audit use the backend directly.
func s3RigStore(rg *faultRig) store {
	t := rg.t
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, gofakes3.New(backend).Server())
	rg.storeFaults = newFaultProxy(t, srv)
	rg.storeToxic = toxicProxy(t, "s3", hostOf(t, rg.storeFaults.srv.URL))
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	return &s3Store{backend: backend, via: "http://" + rg.storeToxic.Listen, directURL: srv}
}

type s3Store struct {
	backend   *s3mem.Backend
	via       string // endpoint through the proxies
	directURL string // gofakes3 itself
}

func s3Query(endpoint string) string {
	return "?endpoint=" + url.QueryEscape(endpoint) + "&region=us-east-1&use_path_style=true&disable_https=true"
}

func (s *s3Store) put(t *testing.T, key string, data []byte) {
	if _, err := s.backend.PutObject("lake", key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

func (s *s3Store) remove(t *testing.T, key string) {
	if _, err := s.backend.DeleteObject("lake", key); err != nil {
		t.Fatal(err)
	}
}

func (s *s3Store) objects(t *testing.T) map[string]string {
	out := map[string]string{}
	list, err := s.backend.ListBucket("lake", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Contents {
		o, err := s.backend.GetObject("lake", c.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(o.Contents)
		o.Contents.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[c.Key] = sha(b)
	}
	return out
}

func (s *s3Store) url(table string) string    { return "s3://lake/" + table + s3Query(s.via) }
func (s *s3Store) direct(table string) string { return "s3://lake/" + table + s3Query(s.directURL) }

// TestFaultsStorageS3 runs deltasync against tables in gofakes3 reached
// through Toxiproxy (latency, throttled reads, resets) and the fault proxy
// (a 503 SlowDown burst, a commit landing between LIST and GET).
func TestFaultsStorageS3(t *testing.T) {
	testenv.Suite(t)
	slowDown := httpFault{Status: 503, Body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`}
	t.Run("latency", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		inject, clearFault := toxic(t, rg.storeToxic, "latency", "downstream", 1, toxiclient.Attributes{"latency": 100, "jitter": 80}, countStorageAttempts)
		rg.scenario("S3: latency 100ms ± 80ms", 3, inject, clearFault)
	})
	t.Run("bandwidth", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		inject, clearFault := toxic(t, rg.storeToxic, "bandwidth", "downstream", 1, toxiclient.Attributes{"rate": 4}, countStorageAttempts)
		rg.scenario("S3: throttled reads 4 KB/s", 3, inject, clearFault)
	})
	t.Run("reset", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		// The S3 SDK resends a reset request itself and keeps connections
		// alive, so the toxic hits every connection while on: reads fail
		// until it is removed.
		inject, clearFault := toxic(t, rg.storeToxic, "reset_peer", "upstream", 1, toxiclient.Attributes{"timeout": 0}, countFailures)
		rg.scenario("S3: connection reset mid-request", 1, inject, clearFault)
	})
	t.Run("cut-response", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		inject, clearFault := toxic(t, rg.storeToxic, "limit_data", "downstream", 1, toxiclient.Attributes{"bytes": 600}, countFailures)
		rg.scenario("S3: connection cut mid-response", 3, inject, clearFault)
	})
	t.Run("slowdown", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		rg.scenario("S3: 503 SlowDown burst", 4, func() { rg.storeFaults.inject(slowDown, 12, nil) }, rg.storeFaults.stop)
	})
	t.Run("commit-between-list-and-get", func(t *testing.T) {
		rg := newFaultRig(t, s3RigStore)
		var armed atomic.Bool
		var landed atomic.Int64
		before := func(r *http.Request, _ []byte) {
			if !armed.Load() || r.URL.Query().Get("list-type") != "2" {
				return
			}
			// The LIST is about to be answered; a writer commits to the
			// listed table before deltasync GETs what it listed.
			prefix := r.URL.Query().Get("prefix")
			table := strings.SplitN(prefix, "/", 2)[0]
			if wt := rg.w.tables[table]; wt != nil && !wt.static {
				rg.w.step(table, "")
				landed.Add(1)
			}
		}
		rg.storeFaults.set(func() { rg.storeFaults.before = before })
		rg.scenario("S3: commit lands between LIST and GET", 4,
			func() { armed.Store(true) }, func() int { armed.Store(false); return int(landed.Load()) })
	})
}

func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFaultCheckerCatchesViolations shows the invariant checker has teeth:
// a record that mixes versions, a watermark moved back, a no-op update sent
// through the proxy and an object written to the store are all reported.
func TestFaultCheckerCatchesViolations(t *testing.T) {
	rg := newFaultRig(t, fileRigStore)
	ctx := context.Background()
	rg.w.step("t0", "add_column")
	rg.w.step("t0", "set_property")
	rg.sync(ctx)
	rg.chk.start()
	name := rg.env.name("t0")
	load := func() *uc.LoadTableResponse {
		lt, err := rg.env.client.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return lt
	}
	update := func(c *uc.Client, u ...uc.Update) {
		lt := load()
		req := uc.UpdateTableRequest{Requirements: []uc.Requirement{
			uc.AssertTableUUID{UUID: lt.Metadata.TableUUID}, uc.AssertEtag{Etag: lt.Metadata.Etag}}, Updates: u}
		if _, err := c.UpdateTable(ctx, name, req); err != nil {
			t.Fatal(err)
		}
	}
	// 1. A no-op update of an in-sync table, sent through the proxy.
	u, _ := url.Parse(rg.env.client.BaseURL())
	u.Host = hostOf(t, rg.ucFaults.srv.URL)
	viaProxy, err := uc.New(u.String(), uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	update(viaProxy, uc.SetProperties{Updates: map[string]string{"owner.team": "ingest"}})
	// 2. A property the log never had (a record of no version).
	update(rg.env.client, uc.SetProperties{Updates: map[string]string{"edited": "by hand"}})
	time.Sleep(150 * time.Millisecond)
	update(rg.env.client, uc.RemoveProperties{Removals: []string{"edited"}})
	// 3. The watermark moved back to version 1 (whose state differs too).
	update(rg.env.client, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 1, LastCommitTimestampMs: 1})
	time.Sleep(150 * time.Millisecond)
	rg.chk.stopPolling()
	// 4. An object the writer did not write.
	rg.w.store.put(t, "t1/_delta_log/_stray", []byte("x"))
	got := strings.Join(append(rg.chk.violationList(), rg.w.audit(t)...), "\n")
	for _, want := range []string{"already in sync", "is not that version's state", "watermark went back", "not written by the writer"} {
		if !strings.Contains(got, want) {
			t.Errorf("checker missed %q; it reported:\n%s", want, got)
		}
	}
}

// catalogLocation is a store URL as the catalog records it: without the
// driver options in its query, which the catalog may not carry.
func catalogLocation(raw string) string {
	loc, _, _ := strings.Cut(raw, "?")
	return loc
}

// bucketOptions turns the driver options in a store URL's query into the
// storage policy's options for its bucket; ok is false without a query.
func bucketOptions(raw string) (sync.BucketOptions, bool) {
	loc, query, ok := strings.Cut(raw, "?")
	if !ok {
		return sync.BucketOptions{}, false
	}
	u, err := url.Parse(loc)
	if err != nil {
		panic(err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		panic(err)
	}
	opts := map[string]string{}
	for k := range q {
		opts[k] = q.Get(k)
	}
	bucket := u.Host
	if u.User != nil { // abfss://container@account.dfs.core.windows.net
		bucket = u.User.Username() + "@" + bucket
	}
	return sync.BucketOptions{Location: u.Scheme + "://" + bucket, Options: opts}, true
}
