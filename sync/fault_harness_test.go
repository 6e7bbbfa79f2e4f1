package sync_test

// The fault harness: Toxiproxy (run in-process, driven through its Go
// client) and a small HTTP fault proxy between deltasync and the real parts,
// a Delta log writer, and the invariant checker that watches the catalog
// while faults run. fault_test.go holds the scenarios.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// toxi is the one Toxiproxy API server of this test binary. Its API server
// cannot be stopped, so it is started once and proxies are deleted by the
// tests that create them.
var toxi struct {
	once   gosync.Once
	client *toxiclient.Client
	err    error
}

// toxiproxyClient starts Toxiproxy's API server on a free loopback port (once)
// and returns a client for it.
func toxiproxyClient(t *testing.T) *toxiclient.Client {
	t.Helper()
	toxi.once.Do(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			toxi.err = err
			return
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		_ = l.Close()
		// Toxiproxy's toxics log through zerolog's global logger.
		zerolog.SetGlobalLevel(zerolog.Disabled)
		srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
		go srv.Listen("127.0.0.1", port)
		c := toxiclient.NewClient("127.0.0.1:" + port)
		for range 200 {
			if _, err = c.Proxies(); err == nil {
				toxi.client = c
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		toxi.err = fmt.Errorf("toxiproxy API on port %s did not answer: %w", port, err)
	})
	if toxi.err != nil {
		t.Fatal(toxi.err)
	}
	return toxi.client
}

// toxicProxy creates a Toxiproxy TCP proxy on a free loopback port in front
// of upstream (host:port) and deletes it when the test ends.
func toxicProxy(t *testing.T, name, upstream string) *toxiclient.Proxy {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	p, err := toxiproxyClient(t).CreateProxy(name+"_"+hex.EncodeToString(b[:]), "127.0.0.1:0", upstream)
	if err != nil {
		t.Fatalf("toxiproxy: create proxy %s → %s: %v", name, upstream, err)
	}
	t.Cleanup(func() { _ = p.Delete() })
	return p
}

// hostOf returns the host:port of an http URL.
func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("not a URL with a host: %q", raw)
	}
	return u.Host
}

// httpFault is an HTTP-level fault the TCP proxy cannot make.
type httpFault struct {
	// Status answers with this code instead of forwarding (503, 429, ...).
	Status     int
	RetryAfter string // Retry-After header with Status
	Body       string // body with Status
	// Truncate forwards, then sends the 2xx answer cut to half its length
	// (Content-Length kept, so the client sees an unexpected EOF).
	Truncate bool
}

// faultProxy is an httputil.ReverseProxy in front of a real server that can
// answer with HTTP faults for the next N matching requests, calls hooks
// around requests, and counts what passed.
type faultProxy struct {
	t      *testing.T
	srv    *httptest.Server
	target *url.URL

	mu       gosync.Mutex
	fault    httpFault
	left     int                         // faults still to inject
	match    func(*http.Request) bool    // which requests the fault hits (nil: all)
	injected int                         // faults injected so far
	before   func(*http.Request, []byte) // called before forwarding (body read)
	after    func(*http.Request, int)    // called after the upstream answered
	modify   func(*http.Response)        // called before the answer is sent on

	requests atomic.Int64
	writes   atomic.Int64 // non-GET/HEAD requests (storage audit)
}

func newFaultProxy(t *testing.T, upstream string) *faultProxy {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	fp := &faultProxy{t: t, target: &url.URL{Scheme: target.Scheme, Host: target.Host}}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(fp.target)
		r.Out.Host = fp.target.Host // emulators route by Host
	}}
	rp.ErrorLog = log.New(io.Discard, "", 0) // killed and faulted clients are expected
	rp.ModifyResponse = func(resp *http.Response) error {
		fp.mu.Lock()
		m := fp.modify
		fp.mu.Unlock()
		if m != nil {
			m(resp)
		}
		return nil
	}
	fp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fp.requests.Add(1)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			fp.writes.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		fp.mu.Lock()
		f, hit := fp.fault, fp.left > 0 && (fp.match == nil || fp.match(r))
		if hit {
			fp.left--
			fp.injected++
		}
		before, after := fp.before, fp.after
		fp.mu.Unlock()
		if before != nil {
			before(r, body)
		}
		switch {
		case hit && f.Status != 0:
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, f.Body)
			return
		case hit && f.Truncate:
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			if after != nil {
				after(r, rec.Code)
			}
			full := rec.Body.Bytes()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(full)))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(full[:len(full)/2])
			// Returning early with fewer bytes than Content-Length makes
			// net/http close the connection: the client reads a short body.
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		rp.ServeHTTP(rec, r)
		if after != nil {
			after(r, rec.code)
		}
	}))
	t.Cleanup(fp.srv.Close)
	return fp
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// set changes hooks under the proxy's lock (requests may be in flight).
func (fp *faultProxy) set(f func()) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	f()
}

// inject makes the next n requests that match (nil: any) answer with f.
func (fp *faultProxy) inject(f httpFault, n int, match func(*http.Request) bool) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.fault, fp.left, fp.match = f, n, match
}

// stop ends injection and returns how many faults were injected in total.
func (fp *faultProxy) stop() int {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.left = 0
	return fp.injected
}

// isUpdateTable matches the Delta API updateTable call (POST to a table path).
func isUpdateTable(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/delta/v1/catalogs/") &&
		strings.Contains(r.URL.Path, "/tables/") && !strings.HasSuffix(r.URL.Path, "/credentials")
}

// tableOfPath returns catalog.schema.table of a Delta API table path.
func tableOfPath(p string) string {
	i := strings.Index(p, "/delta/v1/catalogs/")
	if i < 0 {
		return ""
	}
	parts := strings.Split(strings.Trim(p[i+len("/delta/v1/catalogs/"):], "/"), "/")
	if len(parts) < 5 || parts[1] != "schemas" || parts[3] != "tables" {
		return ""
	}
	return parts[0] + "." + parts[2] + "." + parts[4]
}

// store is where the writer puts Delta logs and where the audit lists them.
type store interface {
	put(t *testing.T, key string, data []byte)
	remove(t *testing.T, key string)
	// objects lists every object in the store (key → sha256).
	objects(t *testing.T) map[string]string
	// url is the table URL deltasync reads (through the proxies).
	url(table string) string
}

// dirStore keeps tables as local directories (file:// URLs).
type dirStore struct{ root string }

func (d dirStore) put(t *testing.T, key string, data []byte) {
	p := filepath.Join(d.root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write then rename: a reader never sees half a commit, as with an
	// object store's atomic PUT.
	tmp := p + ".tmp-writer"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

func (d dirStore) remove(t *testing.T, key string) {
	if err := os.Remove(filepath.Join(d.root, filepath.FromSlash(key))); err != nil {
		t.Fatal(err)
	}
}

func (d dirStore) objects(t *testing.T) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.root, p)
		out[filepath.ToSlash(rel)] = sha(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (d dirStore) url(table string) string { return "file://" + filepath.Join(d.root, table) }

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// logWriter appends Delta commits to tables the way a writer would: JSON
// commits with appends, new columns, property and description changes. It
// remembers every object it wrote and each version's full state (the
// snapshot deltalog reads right after the commit), so the checker can tell
// whether a catalog record equals some version.
type logWriter struct {
	t     *testing.T
	store store

	mu      gosync.Mutex
	written map[string]string // key → sha256 of what the writer put
	tables  map[string]*writtenTable
}

type writtenTable struct {
	name    string // table name in the schema
	version int64
	columns []string
	props   map[string]string
	desc    string
	states  map[int64]plan.LogState
	seq     int
	static  bool // imported from the corpus: never stepped
}

func newLogWriter(t *testing.T, s store) *logWriter {
	return &logWriter{t: t, store: s, written: map[string]string{}, tables: map[string]*writtenTable{}}
}

// create writes version 0 of table.
func (w *logWriter) create(table string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := &writtenTable{name: table, version: -1, columns: []string{"id"},
		props: map[string]string{"owner.team": "ingest"}, desc: table + " v0", states: map[int64]plan.LogState{}}
	w.tables[table] = wt
	w.commit(wt, "create", true, true)
}

// importTable copies the corpus table src (all of it) into the store as
// table; it is registered at its latest version and never stepped.
func (w *logWriter) importTable(table, src string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	testcorpus.ReadTree(w.t, filepath.Join(testcorpus.Dir(w.t), src), func(rel string, b []byte) error {
		key := table + "/" + rel
		w.store.put(w.t, key, b)
		w.written[key] = sha(b)
		return nil
	})
	st := w.readState(table)
	w.tables[table] = &writtenTable{name: table, version: st.Version, static: true, states: map[int64]plan.LogState{st.Version: st}}
}

// vacuum deletes key as a log clean-up would; the audit expects it gone.
func (w *logWriter) vacuum(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.written[key]; !ok {
		return false
	}
	w.store.remove(w.t, key)
	delete(w.written, key)
	return true
}

// restore puts back a file from the corpus (a new checkpoint at the same version).
func (w *logWriter) restore(key string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.store.put(w.t, key, data)
	w.written[key] = sha(data)
}

// step appends one commit to table: op is one of append, add_column,
// set_property, unset_property, set_description ("" picks by sequence).
func (w *logWriter) step(table, op string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := w.tables[table]
	if op == "" {
		ops := []string{"append", "add_column", "set_property", "append", "set_description", "unset_property"}
		op = ops[wt.seq%len(ops)]
	}
	wt.seq++
	meta := true
	switch op {
	case "append":
		meta = false
	case "add_column":
		wt.columns = append(wt.columns, fmt.Sprintf("c%d", len(wt.columns)))
	case "set_property":
		wt.props[fmt.Sprintf("p.%d", wt.seq)] = strconv.Itoa(wt.seq)
	case "unset_property":
		for k := range wt.props {
			if strings.HasPrefix(k, "p.") {
				delete(wt.props, k)
				break
			}
		}
	case "set_description":
		wt.desc = fmt.Sprintf("%s described at v%d", table, wt.version+1)
	default:
		w.t.Fatalf("unknown writer op %q", op)
	}
	w.commit(wt, op, meta, false)
	return wt.version
}

// commit writes the next version of wt and records its state. Called with w.mu held.
func (w *logWriter) commit(wt *writtenTable, op string, meta, proto bool) {
	v := wt.version + 1
	ts := time.Now().UnixMilli()
	var lines []string
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			w.t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add(map[string]any{"commitInfo": map[string]any{"timestamp": ts, "operation": op}})
	if proto {
		add(map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}})
	}
	if meta {
		fields := make([]map[string]any, 0, len(wt.columns))
		for _, c := range wt.columns {
			fields = append(fields, map[string]any{"name": c, "type": "long", "nullable": true, "metadata": map[string]any{}})
		}
		schema, _ := json.Marshal(map[string]any{"type": "struct", "fields": fields})
		add(map[string]any{"metaData": map[string]any{
			"id": "00000000-0000-4000-8000-" + fmt.Sprintf("%012x", len(wt.name)), "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
			"schemaString": string(schema), "partitionColumns": []string{}, "configuration": wt.props,
			"description": wt.desc, "createdTime": ts,
		}})
	}
	if op == "append" {
		add(map[string]any{"add": map[string]any{"path": fmt.Sprintf("part-%05d.parquet", v), "partitionValues": map[string]any{},
			"size": 1024, "modificationTime": ts, "dataChange": true}})
	}
	key := fmt.Sprintf("%s/_delta_log/%020d.json", wt.name, v)
	data := []byte(strings.Join(lines, "\n") + "\n")
	w.store.put(w.t, key, data)
	w.written[key] = sha(data)
	wt.version = v
	wt.states[v] = w.readState(wt.name)
	if wt.states[v].Version != v {
		w.t.Fatalf("writer: %s read back at v%d after writing v%d", wt.name, wt.states[v].Version, v)
	}
}

// readState reads the table's latest state directly (not through proxies).
func (w *logWriter) readState(table string) plan.LogState {
	ctx := context.Background()
	u := w.directURL(table)
	tbl, err := deltalog.Open(ctx, u, directLogOptions...)
	if err != nil {
		w.t.Fatalf("writer: open %s: %v", u, err)
	}
	defer tbl.Close()
	s, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		w.t.Fatalf("writer: load %s: %v", u, err)
	}
	return sync.LogStateOf(s, catalogLocation(w.store.url(table)))
}

// directURL is the URL of table without the fault proxies.
func (w *logWriter) directURL(table string) string {
	if d, ok := w.store.(interface{ direct(string) string }); ok {
		return d.direct(table)
	}
	return w.store.url(table)
}

// directLogOptions are the deltalog options of direct reads (credentials of
// the emulators); set by the stores that need them.
var directLogOptions []deltalog.Option

// stateAt returns the state of table at version v.
func (w *logWriter) stateAt(table string, v int64) (plan.LogState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.tables[table].states[v]
	return s, ok
}

// withLatest calls f with the table's newest state, the writer held off.
func (w *logWriter) withLatest(table string, f func(plan.LogState)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := w.tables[table]
	f(wt.states[wt.version])
}

// audit compares the store object by object with what the writer wrote:
// any other object, or any changed content, is a write nobody but deltasync
// could have made.
func (w *logWriter) audit(t *testing.T) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad []string
	got := w.store.objects(t)
	for k, h := range got {
		if wh, ok := w.written[k]; !ok {
			bad = append(bad, "object not written by the writer: "+k)
		} else if wh != h {
			bad = append(bad, "object changed: "+k)
		}
	}
	for k := range w.written {
		if _, ok := got[k]; !ok {
			bad = append(bad, "object gone: "+k)
		}
	}
	sort.Strings(bad)
	return bad
}

// logStates tells the checker what each log version's full state is.
type logStates interface {
	stateAt(table string, v int64) (plan.LogState, bool)
	// withLatest calls f with the newest state; the log does not move
	// back meanwhile (it may only grow).
	withLatest(table string, f func(plan.LogState))
}

// checker holds the invariants and records violations. It reads the
// catalog directly (never through the fault proxies).
type checker struct {
	t      *testing.T
	client *uc.Client // direct
	w      logStates
	names  map[string]catalog.TableName // writer table → catalog name

	mu         gosync.Mutex
	watermark  map[string]int64
	violations []string
	polls      atomic.Int64
	stop       chan struct{}
	done       chan struct{}
	updates    atomic.Int64
	// truncated counts updateTable bodies cut short (a kill -9 mid-request):
	// no request the server could apply, so neither guarded nor not.
	truncated atomic.Int64
}

func newChecker(t *testing.T, direct *uc.Client, w logStates, names map[string]catalog.TableName) *checker {
	return &checker{t: t, client: direct, w: w, names: names, watermark: map[string]int64{}}
}

func (c *checker) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	c.violations = append(c.violations, msg)
	c.t.Logf("INVARIANT VIOLATED: %s", msg)
}

// record reads both catalog views of a table directly.
func (c *checker) record(ctx context.Context, name catalog.TableName) (plan.Record, error) {
	lt, err := c.client.LoadTable(ctx, name)
	if err != nil {
		return plan.Record{}, err
	}
	ti, err := c.client.GetTable(ctx, name.String())
	if err != nil {
		return plan.Record{}, err
	}
	return uc.RecordOf(name, lt, ti.Comment, ti.StorageLocation), nil
}

// observe checks one record: its watermark never goes back, and it equals
// the full state of the log version it names.
func (c *checker) observe(table string, rec plan.Record) {
	w := rec.LastCommitVersion
	if w == nil {
		c.violate("%s: record has no watermark", table)
		return
	}
	c.mu.Lock()
	prev, seen := c.watermark[table]
	if !seen || *w > prev {
		c.watermark[table] = *w
	}
	c.mu.Unlock()
	if seen && *w < prev {
		c.violate("%s: watermark went back from %d to %d", table, prev, *w)
	}
	state, ok := c.w.stateAt(table, *w)
	if !ok {
		c.violate("%s: record names version %d, which the writer never wrote", table, *w)
		return
	}
	if p := plan.Diff(state, rec, plan.DiffOptions{}); !p.Empty() {
		// The record was read in two requests (loadTable, getTable): a
		// sync between them shows a newer comment with an older record.
		// Re-read once before calling it a mix of versions.
		again, err := c.record(context.Background(), c.names[table])
		if err == nil && again.Etag == rec.Etag {
			c.violate("%s: record at watermark %d is not that version's state: differs in %v", table, *w, p.Kinds())
		}
	}
}

// start polls every table's record until stopPolling.
func (c *checker) start() {
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		ctx := context.Background()
		for {
			for table, name := range c.names {
				select {
				case <-c.stop:
					return
				default:
				}
				rec, err := c.record(ctx, name)
				if err != nil {
					continue // the catalog itself is not under test here
				}
				c.polls.Add(1)
				c.observe(table, rec)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

func (c *checker) stopPolling() {
	if c.stop != nil {
		close(c.stop)
		<-c.done
		c.stop = nil
	}
}

// beforeUpdate is the fault proxy's hook for updateTable: an update that
// the server would apply (its etag is current) to a table whose record
// already equals the latest log is a violation. It holds the writer's lock,
// so the latest state is at least what the daemon read.
func (c *checker) beforeUpdate(r *http.Request, body []byte) {
	if !isUpdateTable(r) {
		return
	}
	full := tableOfPath(r.URL.Path)
	var table string
	for tb, n := range c.names {
		if n.String() == full {
			table = tb
		}
	}
	if table == "" {
		return
	}
	etag, verdict, err := classifyUpdate(body)
	switch verdict {
	case bodyTruncated:
		c.truncated.Add(1)
		c.t.Logf("%s: update body cut short after %d bytes (%v): not a request the server could apply", table, len(body), err)
		return
	case bodyMalformed:
		c.violate("%s: update body does not decode (%v), and it is not cut short", table, err)
		return
	}
	c.updates.Add(1)
	c.w.withLatest(table, func(latest plan.LogState) {
		rec, err := c.record(context.Background(), c.names[table])
		if err != nil {
			return
		}
		if verdict == bodyUnguarded {
			c.violate("%s: update sent without assert-etag", table)
		}
		if etag == rec.Etag && plan.Diff(latest, rec, plan.DiffOptions{}).Empty() {
			c.violate("%s: update sent for a table already in sync at v%d", table, latest.Version)
		}
	})
}

// updateVerdict is what the checker makes of an updateTable body.
type updateVerdict int

const (
	// bodyGuarded: it decodes and carries an assert-etag.
	bodyGuarded updateVerdict = iota
	// bodyUnguarded: it decodes and carries no assert-etag: a violation.
	bodyUnguarded
	// bodyTruncated: it is a JSON document cut short (what a request
	// reads as when its sender is killed mid-body): the server cannot
	// apply it, so it is counted apart, never as an unguarded write.
	bodyTruncated
	// bodyMalformed: it does not decode and is not merely cut short: a
	// violation (the daemon sent something that is not a request).
	bodyMalformed
)

// classifyUpdate decodes an updateTable body: its assert-etag ("" when
// none) and verdict, and for a body that does not decode, the error.
func classifyUpdate(body []byte) (etag string, v updateVerdict, err error) {
	var req struct {
		Requirements []struct {
			Type string `json:"type"`
			Etag string `json:"etag"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) && syn.Offset == int64(len(body)) && strings.Contains(syn.Error(), "unexpected end of JSON input") {
			return "", bodyTruncated, err
		}
		return "", bodyMalformed, err
	}
	for _, q := range req.Requirements {
		if q.Type == "assert-etag" {
			etag = q.Etag
		}
	}
	if etag == "" {
		return "", bodyUnguarded, nil
	}
	return etag, bodyGuarded, nil
}

// outOfSync returns the tables whose record differs from the latest log.
func (c *checker) outOfSync(ctx context.Context) []string {
	var bad []string
	for table, name := range c.names {
		rec, err := c.record(ctx, name)
		if err != nil {
			bad = append(bad, table+": "+err.Error())
			continue
		}
		c.w.withLatest(table, func(latest plan.LogState) {
			if p := plan.Diff(latest, rec, plan.DiffOptions{}); !p.Empty() {
				bad = append(bad, fmt.Sprintf("%s: %v at v%d", table, p.Kinds(), latest.Version))
			}
		})
	}
	sort.Strings(bad)
	return bad
}

func (c *checker) violationCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.violations)
}

func (c *checker) violationList() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

// reliabilityRow is one line of RELIABILITY.md.
type reliabilityRow struct {
	Fault      string `json:"fault"`
	Injected   int    `json:"injected"`
	Cycles     int    `json:"cycles"`
	Violations int    `json:"violations"`
	InSync     int    `json:"in_sync"`
	Tables     int    `json:"tables"`
	// Truncated counts update bodies cut short by a kill (soak only):
	// neither writes nor violations.
	Truncated int `json:"truncated_bodies,omitempty"`
}

var reportMu gosync.Mutex

// reportRow appends the row as JSON to $DELTASYNC_RELIABILITY_OUT (when set);
// .ci/reliability.sh renders the file into RELIABILITY.md.
func reportRow(t *testing.T, row reliabilityRow) {
	t.Helper()
	t.Logf("reliability: %+v", row)
	out := os.Getenv("DELTASYNC_RELIABILITY_OUT")
	if out == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	b, _ := json.Marshal(row)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}
