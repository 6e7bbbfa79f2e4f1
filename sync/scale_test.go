//go:build unix

package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// The scale benchmark (BENCHMARKS.md, "Fleet scale"): N realistic tables
// (delta-rs-written logs, each table with a schema and table id of its own,
// see scaleTables), registered in uctest running in a separate process
// (this test binary re-executed as TestScaleServer), reconciled by one
// Reconciler here.
//
//	DELTASYNC_SCALE_TABLES=10000 DELTASYNC_PYTHON=... DELTASYNC_CACHE=$PWD/.cache \
//	  go test ./sync -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -v -timeout 0
//
// Optional: DELTASYNC_SCALE_CONCURRENCY (default 16), DELTASYNC_SCALE_LATENCY
// (e.g. 10ms: uctest delays every request once the tables are registered),
// DELTASYNC_SCALE_NO_RELEASE=1 (no memory released after each cycle, which run does).
const (
	scaleTemplates  = 30   // logs written by delta-rs (testdata/scale/make_templates.py)
	scalePerSchema  = 1000 // tables per schema
	scaleTplRev     = "r1" // bump when make_templates.py changes
	scaleRev        = "r2" // bump when scaleTables changes
	scaleServeEnv   = "DELTASYNC_SCALE_SERVE"
	scaleTablesEnv  = "DELTASYNC_SCALE_TABLES"
	scaleLatencyEnv = "DELTASYNC_SCALE_LATENCY"
	// scaleLocationEnv, when set, is where TestScaleServer registers the
	// tables: prefix + "/t000042" (BenchmarkScaleS3), not their directories.
	scaleLocationEnv = "DELTASYNC_SCALE_LOCATION"
	// scaleLocationOddEnv, when set, is where the odd tables are
	// registered instead (BenchmarkScaleS3Throttled: a second bucket).
	scaleLocationOddEnv = "DELTASYNC_SCALE_LOCATION_ODD"
)

func scaleCache(t testing.TB) string {
	d := os.Getenv("DELTASYNC_CACHE")
	if d == "" {
		d = filepath.Join(os.TempDir(), "deltasync-cache")
	}
	d, err := filepath.Abs(filepath.Join(d, "scale"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// scaleTables makes (or reuses) n table directories. Table i's
// _delta_log holds hard links to the files of template i%30 and one commit
// of its own on top (scaleDistinct), so that no two tables share a schema
// or a table id, as in a real fleet: memory a Reconciler keeps per table
// is then not flattered by strings equal across tables.
func scaleTables(t testing.TB, n int) string {
	t.Helper()
	root := scaleCache(t)
	tpl := scaleTemplateDir(root)
	if _, err := os.Stat(filepath.Join(tpl, "complete")); err != nil {
		py := os.Getenv("DELTASYNC_PYTHON")
		if py == "" {
			t.Skip("DELTASYNC_PYTHON (python with deltalake) is needed once to write the template tables")
		}
		if err := os.MkdirAll(tpl, 0o755); err != nil {
			t.Fatal(err)
		}
		script, _ := filepath.Abs(filepath.Join("testdata", "scale", "make_templates.py"))
		cmd := exec.Command(py, script, tpl, strconv.Itoa(scaleTemplates))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("writing templates: %v\n%s", err, out)
		}
		if err := os.WriteFile(filepath.Join(tpl, "complete"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, fmt.Sprintf("tables-%d-%s", n, scaleRev))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return dir
	}
	tpls := scaleTemplateSnapshots(t, root)
	for i := range n {
		src := filepath.Join(tpl, fmt.Sprintf("t%03d", i%scaleTemplates), "_delta_log")
		dst := filepath.Join(dir, fmt.Sprintf("t%06d", i), "_delta_log")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if err := os.Link(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil && !os.IsExist(err) {
				t.Fatal(err)
			}
		}
		writeDistinctCommit(t, dst, tpls[i%scaleTemplates], i)
	}
	if err := os.WriteFile(filepath.Join(dir, "complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func scaleTemplateDir(root string) string {
	return filepath.Join(root, "templates-"+scaleTplRev)
}

// scaleTemplateSnapshots loads the templates' latest snapshots.
func scaleTemplateSnapshots(t testing.TB, root string) []*deltalog.Snapshot {
	t.Helper()
	snaps := make([]*deltalog.Snapshot, scaleTemplates)
	for k := range snaps {
		snaps[k] = snapshot(t, filepath.Join(scaleTemplateDir(root), fmt.Sprintf("t%03d", k)))
	}
	return snaps
}

// scaleDistinct is what table i's own commit changes in its template's
// metaData: a column named after the table (as ALTER TABLE ADD COLUMNS
// writes it), a table id of its own, and the commit's timestamp.
func scaleDistinct(tpl *deltalog.Snapshot, i int) (schema, id string, ts int64) {
	s := tpl.Metadata.SchemaString
	if !strings.HasSuffix(s, "]}") {
		panic("template schemaString does not end its field list with ]}: " + s)
	}
	schema = s[:len(s)-2] + fmt.Sprintf(`,{"name":"note_t%06d","type":"string","nullable":true,"metadata":{}}]}`, i)
	id = fmt.Sprintf("%08x-5ca1-4e00-8000-%012x", i, i)
	return schema, id, tpl.CommitTimestamp + 1000
}

// scaleSnapshot is table i's snapshot, derived from its template's as
// writeDistinctCommit changed it (what TestScaleServer registers).
func scaleSnapshot(tpl *deltalog.Snapshot, i int) *deltalog.Snapshot {
	s := *tpl
	s.Version++
	s.Metadata.SchemaString, s.Metadata.ID, s.CommitTimestamp = scaleDistinct(tpl, i)
	return &s
}

// writeDistinctCommit writes table i's own commit into logDir: commitInfo
// and the template's metaData with scaleDistinct's changes.
func writeDistinctCommit(t testing.TB, logDir string, tpl *deltalog.Snapshot, i int) {
	t.Helper()
	raw, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		MetaData map[string]any `json:"metaData"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&whole); err != nil {
		t.Fatal(err)
	}
	schema, id, ts := scaleDistinct(tpl, i)
	whole.MetaData["schemaString"], whole.MetaData["id"] = schema, id
	ci := map[string]any{"timestamp": ts, "operation": "ADD COLUMNS", "operationParameters": map[string]any{}}
	if tpl.Metadata.Configuration["delta.enableInCommitTimestamps"] == "true" {
		ci["inCommitTimestamp"] = ts
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, action := range []any{map[string]any{"commitInfo": ci}, map[string]any{"metaData": whole.MetaData}} {
		if err := enc.Encode(action); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(logDir, fmt.Sprintf("%020d.json", tpl.Version+1))
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func scaleName(i int) catalog.TableName {
	return catalog.TableName{Catalog: "scale", Schema: fmt.Sprintf("s%03d", i/scalePerSchema), Table: fmt.Sprintf("t%06d", i)}
}

// TestScaleServer is the uctest process of BenchmarkScale; it does nothing unless
// started by it. It registers every table, prints the URL and serves until
// its stdin is closed.
func TestScaleServer(t *testing.T) {
	dir := os.Getenv(scaleServeEnv)
	if dir == "" {
		t.Skip("run by BenchmarkScale")
	}
	n, _ := strconv.Atoi(os.Getenv(scaleTablesEnv))
	srv := uctest.NewServer()
	defer srv.Close()
	c, err := uc.New(srv.URL(), uc.Options{IdleConnsPerHost: 16})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < n; i += scalePerSchema {
		srv.AddSchema("scale", scaleName(i).Schema)
	}
	snaps := scaleTemplateSnapshots(t, filepath.Dir(dir))
	var next atomic.Int64
	var wg stdsync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				loc := "file://" + filepath.Join(dir, fmt.Sprintf("t%06d", i))
				if prefix := os.Getenv(scaleLocationEnv); prefix != "" { // BenchmarkScaleS3: the same tables in a bucket
					loc = prefix + fmt.Sprintf("/t%06d", i)
				}
				if prefix := os.Getenv(scaleLocationOddEnv); prefix != "" && i%2 == 1 { // BenchmarkScaleS3Throttled
					loc = prefix + fmt.Sprintf("/t%06d", i)
				}
				if _, err := sync.Register(ctx, kindOf(c), scaleSnapshot(snaps[i%scaleTemplates], i), scaleName(i), loc); err != nil {
					t.Errorf("register %d: %v", i, err)
					return
				}
				if i%1000 == 999 {
					srv.ResetRequests()
				}
			}
		})
	}
	wg.Wait()
	srv.ResetRequests()
	if d, err := time.ParseDuration(os.Getenv(scaleLatencyEnv)); err == nil {
		srv.SetLatency(d)
	}
	go func() { // the server records every request: keep that bounded
		for range time.Tick(time.Second) {
			srv.ResetRequests()
		}
	}()
	fmt.Printf("\nUCTEST_URL=%s\n", srv.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// scaleCycle is what one cycle cost this process.
type scaleCycle struct {
	name                 string
	wall, cpu            time.Duration
	catalogReqs          map[string]int
	lists, gets          float64
	peakRSSMiB           float64
	heap                 heapPeaks
	scrape               heapPeaks // of the /metrics scrape after the cycle
	scrapeRSSMiB         float64
	unchanged, synced, n int
}

// heapPeaks are the largest values runtime/metrics showed while a cycle ran:
// where a peak RSS comes from (live objects, or the collector's goal above
// them).
type heapPeaks struct{ live, goal, objects, runtime uint64 }

// sampleHeap samples runtime/metrics every 2 ms until stop is called.
func sampleHeap() (stop func() heapPeaks) {
	samples := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var p heapPeaks
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			rtmetrics.Read(samples)
			p.live = max(p.live, samples[0].Value.Uint64())
			p.goal = max(p.goal, samples[1].Value.Uint64())
			p.objects = max(p.objects, samples[2].Value.Uint64())
			// What the runtime holds from the OS (heap, stacks, GC
			// metadata; what GOMEMLIMIT bounds), not the binary's pages.
			p.runtime = max(p.runtime, samples[3].Value.Uint64()-samples[4].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() heapPeaks { close(done); <-finished; return p }
}

// scaleSelection selects the scale tables and allows their directory:
// local tables must be allowed explicitly (the default allow-list has only
// the cloud stores).
func scaleSelection(t testing.TB, dir string) (*sync.Selector, *sync.StoragePolicy) {
	t.Helper()
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{"scale.*.*"}}})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(dir) + "/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sel, pol
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// storageRequests scrapes /metrics as Prometheus would (the text format,
// which streams the per-table series) and reads the storage request
// counters from it on the fly.
func storageRequests(t testing.TB, h http.Handler) (lists, gets float64) {
	c := &storageCounter{}
	h.ServeHTTP(c, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if c.status != 0 && c.status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", c.status)
	}
	c.line(c.partial)
	return c.lists, c.gets
}

// storageCounter is an http.ResponseWriter that keeps only the values of
// deltasync_storage_requests_total.
type storageCounter struct {
	status      int
	partial     []byte
	lists, gets float64
}

func (c *storageCounter) Header() http.Header { return http.Header{} }
func (c *storageCounter) WriteHeader(s int)   { c.status = s }
func (c *storageCounter) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			c.partial = append(c.partial, b...)
			return n, nil
		}
		if len(c.partial) > 0 {
			c.partial = append(c.partial, b[:i]...)
			c.line(c.partial)
			c.partial = c.partial[:0]
		} else {
			c.line(b[:i])
		}
		b = b[i+1:]
	}
}

func (c *storageCounter) line(l []byte) {
	rest, ok := bytes.CutPrefix(l, []byte("deltasync_storage_requests_total{"))
	if !ok {
		return
	}
	sp := bytes.LastIndexByte(rest, ' ')
	v, err := strconv.ParseFloat(string(rest[sp+1:]), 64)
	if sp < 0 || err != nil {
		return
	}
	if bytes.Contains(rest[:sp], []byte(`op="list"`)) {
		c.lists += v
	} else {
		c.gets += v
	}
}

// BenchmarkScale runs the scale scenario once (it takes minutes at 10,000
// tables, so the framework does not repeat it) and reports each cycle's
// wall time; the per-cycle table goes to the log (-v). Its checks of what
// each cycle did stay: a benchmark whose cycles did the wrong thing
// measures nothing.
func BenchmarkScale(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv(scaleTablesEnv))
	if n <= 0 || os.Getenv(scaleServeEnv) != "" {
		b.Skip("set DELTASYNC_SCALE_TABLES=N to run the scale benchmark")
	}
	for _, c := range runScale(b, n) {
		b.ReportMetric(c.wall.Seconds(), strings.NewReplacer(" ", "_", "%", "pct").Replace(c.name)+"-s")
		b.ReportMetric(float64(c.cpu.Microseconds())/1000/float64(n), strings.NewReplacer(" ", "_", "%", "pct").Replace(c.name)+"-cpu-ms/table")
	}
}

// startScaleCatalog starts uctest in its own process (its CPU and memory
// are not ours), registering n tables of dir with extraEnv set, and
// returns its URL; the process ends when t does.
func startScaleCatalog(t testing.TB, n int, dir string, extraEnv ...string) string {
	t.Helper()
	// uctest in its own process: its CPU and memory are not ours.
	child := exec.Command(os.Args[0], "-test.run=^TestScaleServer$", "-test.timeout=0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") { // ours, not the server's
			child.Env = append(child.Env, kv)
		}
	}
	child.Env = append(child.Env, scaleServeEnv+"="+dir, fmt.Sprintf("%s=%d", scaleTablesEnv, n))
	child.Env = append(child.Env, extraEnv...)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	regStart := time.Now()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = child.Wait() })
	url := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "UCTEST_URL="); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatalf("uctest process ended without serving: %v", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	t.Logf("%d tables registered in the uctest process in %s", n, time.Since(regStart).Round(time.Second))

	return url
}

// runScale is the scale scenario over n tables; it returns its cycles.
func runScale(t testing.TB, n int) []scaleCycle {
	concurrency := 16
	if c, err := strconv.Atoi(os.Getenv("DELTASYNC_SCALE_CONCURRENCY")); err == nil && c > 0 {
		concurrency = c
	}
	dir := scaleTables(t, n)

	url := startScaleCatalog(t, n, dir)

	var mu stdsync.Mutex
	ops := map[string]int{}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "scale")
	client, err := uc.New(url, uc.Options{IdleConnsPerHost: concurrency + 2,
		Observer: func(op string, status int, d time.Duration, err error) {
			m.ObserveCatalog(op, status, d, err)
			mu.Lock()
			ops[op]++
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	sel, pol := scaleSelection(t, dir)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseRSS := ms.HeapAlloc, peakRSSMiB()
	// The reconciler's clock stands still unless moved: the steady and
	// drift cycles are "between resyncs"; the last cycle moves it one
	// minute into the interval, where 1/60 of the tables are due.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	scrapes := m.Handler(reg, promhttp.HandlerOpts{})
	// As deltasync run builds it; like the daemon, a cycle ends by
	// returning its garbage to the OS (cmd/deltasync releaseMemory).
	release := os.Getenv("DELTASYNC_SCALE_NO_RELEASE") == ""
	rec, err := sync.New(sync.Options{Catalog: kindOf(client), Selector: sel, Concurrency: concurrency, Storage: pol,
		ResyncInterval: time.Hour, Metrics: m, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ctx := context.Background()

	var cycles []scaleCycle
	cycle := func(name string) *sync.Report {
		mu.Lock()
		clear(ops)
		mu.Unlock()
		l0, g0 := storageRequests(t, scrapes)
		cpu0, start, stopSampling := cpuTime(), time.Now(), sampleHeap()
		rep := rec.Sync(ctx)
		if release {
			debug.FreeOSMemory()
		}
		c := scaleCycle{name: name, wall: time.Since(start), cpu: cpuTime() - cpu0, heap: stopSampling(), n: len(rep.Results),
			unchanged: rep.Count(sync.OutcomeUnchanged), synced: rep.Count(sync.OutcomeSynced), peakRSSMiB: peakRSSMiB()}
		// The scrape that counts storage requests is what Prometheus
		// does; its own peaks are kept apart from the cycle's.
		stopSampling = sampleHeap()
		l1, g1 := storageRequests(t, scrapes)
		c.scrape, c.scrapeRSSMiB = stopSampling(), peakRSSMiB()
		c.lists, c.gets = l1-l0, g1-g0
		mu.Lock()
		c.catalogReqs = copyCounts(ops)
		mu.Unlock()
		cycles = append(cycles, c)
		if rep.Failed() || len(rep.Results) != n {
			t.Fatalf("%s cycle: %s", name, rep.Summary())
		}
		return rep
	}

	// DELTASYNC_SCALE_MIDPROFILE=file DELTASYNC_SCALE_MIDPROFILE_AT=40s,65s:
	// heap profiles (after a GC: what is live) that long after the first
	// cycle started, written to file.1, file.2, …
	if p := os.Getenv("DELTASYNC_SCALE_MIDPROFILE"); p != "" {
		for i, at := range strings.Split(os.Getenv("DELTASYNC_SCALE_MIDPROFILE_AT"), ",") {
			d, err := time.ParseDuration(at)
			if err != nil {
				t.Fatalf("DELTASYNC_SCALE_MIDPROFILE_AT: %v", err)
			}
			time.AfterFunc(d, func() {
				runtime.GC()
				if f, err := os.Create(fmt.Sprintf("%s.%d", p, i+1)); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			})
		}
	}
	if rep := cycle("first"); rep.Count(sync.OutcomeUnchanged) != n {
		t.Errorf("first cycle: %s, want every table unchanged", rep.Summary())
	}
	if p := os.Getenv("DELTASYNC_SCALE_HEAPPROFILE"); p != "" { // what the first cycle left
		writeHeapProfile(t, p+".first")
	}
	if os.Getenv(scaleLatencyEnv) == "" {
		if p := os.Getenv("DELTASYNC_SCALE_CPUPROFILE"); p != "" { // of the steady cycle
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				t.Fatal(err)
			}
		}
		if rep := cycle("steady"); rep.Count(sync.OutcomeUnchanged) != n {
			t.Errorf("steady cycle: %s", rep.Summary())
		}
		pprof.StopCPUProfile()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if p := os.Getenv("DELTASYNC_SCALE_HEAPPROFILE"); p != "" {
			writeHeapProfile(t, p)
		}
		t.Logf("heap retained after the steady cycle: %.1f KiB per table (%.0f MiB in all); heap obtained from the OS %.0f MiB, of it idle and not returned %.0f MiB",
			float64(ms.HeapAlloc-baseHeap)/1024/float64(n), float64(ms.HeapAlloc-baseHeap)/(1<<20),
			float64(ms.HeapSys)/(1<<20), float64(ms.HeapIdle-ms.HeapReleased)/(1<<20))

		drifted := scaleDrift(t, ctx, url, dir, rec, n)
		rep := cycle("1% drift")
		if rep.Count(sync.OutcomeSynced) != drifted || rep.Count(sync.OutcomeUnchanged) != n-drifted {
			t.Errorf("drift cycle: %s, want %d synced", rep.Summary(), drifted)
		}
		// Drifted tables: loadTable, updateTable, then loadTable and the
		// classic getTable to confirm. Nothing for the others.
		last := cycles[len(cycles)-1].catalogReqs
		if last["loadTable"] != 2*drifted || last["updateTable"] != drifted || last["getTable"] != drifted {
			t.Errorf("drift cycle: per-table catalog requests %v; want loadTable twice, updateTable and getTable once for each of %d drifted tables only",
				last, drifted)
		}

		clock.Add(int64(time.Minute))
		rep = cycle("1 min into the resync interval")
		if rep.Count(sync.OutcomeUnchanged) != n {
			t.Errorf("resync cycle: %s", rep.Summary())
		}
		resynced := cycles[len(cycles)-1].catalogReqs["loadTable"]
		t.Logf("one minute into the resync interval: %d tables (%.2f%%) fully re-read", resynced, 100*float64(resynced)/float64(n))
		if resynced == 0 || resynced > n/60*2 {
			t.Errorf("%d of %d tables fully re-read one minute into a one-hour interval, want about 1/60", resynced, n)
		}
	}
	var load [3]float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		_, _ = fmt.Sscan(string(b), &load[0], &load[1], &load[2])
	}
	t.Logf("%d tables, concurrency %d, GOMAXPROCS %d, load average %.1f %.1f %.1f, latency %q",
		n, concurrency, runtime.GOMAXPROCS(0), load[0], load[1], load[2], os.Getenv(scaleLatencyEnv))
	t.Logf("process RSS before the Reconciler existed: %.0f MiB", baseRSS)
	t.Logf("| cycle | wall | CPU | CPU per table | catalog req/table | storage LIST/table | storage GET/table | peak RSS | max Go runtime memory | max live / goal / objects heap | outcomes |")
	t.Logf("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cycles {
		total := 0
		for _, v := range c.catalogReqs {
			total += v
		}
		t.Logf("| %s | %.2f s | %.2f s | %.3f ms | %.4f %v | %.3f | %.3f | %.0f MiB | %.0f MiB | %.0f / %.0f / %.0f MiB | %d unchanged, %d synced |",
			c.name, c.wall.Seconds(), c.cpu.Seconds(), float64(c.cpu.Microseconds())/1000/float64(n),
			float64(total)/float64(n), c.catalogReqs, c.lists/float64(n), c.gets/float64(n), c.peakRSSMiB, float64(c.heap.runtime)/(1<<20),
			float64(c.heap.live)/(1<<20), float64(c.heap.goal)/(1<<20), float64(c.heap.objects)/(1<<20), c.unchanged, c.synced)
	}
	t.Logf("the /metrics scrape after each cycle:")
	for _, c := range cycles {
		t.Logf("| after %s | max Go runtime memory %.0f MiB | max live / goal / objects heap %.0f / %.0f / %.0f MiB | peak RSS so far %.0f MiB |", c.name,
			float64(c.scrape.runtime)/(1<<20), float64(c.scrape.live)/(1<<20), float64(c.scrape.goal)/(1<<20), float64(c.scrape.objects)/(1<<20), c.scrapeRSSMiB)
	}
	return cycles
}

// writeHeapProfile writes a heap profile after a GC (what is live) to p.
func writeHeapProfile(t testing.TB, p string) {
	runtime.GC()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// scaleDrift drifts 1% of the tables: half get a new commit in their log
// (a writer appended data; removed again when the test ends), half a
// property set only in the catalog (someone edited the record). It returns
// how many tables drifted.
func scaleDrift(t testing.TB, ctx context.Context, url, dir string, rec *sync.Reconciler, n int) int {
	t.Helper()
	return driftScaleTables(t, ctx, url, rec, n, func(table string, v int64, line []byte) {
		p := filepath.Join(dir, table, "_delta_log", fmt.Sprintf("%020d.json", v))
		// O_EXCL: the log files are hard links shared with the
		// templates; writing through an existing one would corrupt them.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(p) })
	})
}

// driftScaleTables drifts every 100th table from the 7th: even hundreds
// get the next commit through appendCommit (the table's directory name,
// the new version, the commit's lines), odd ones a property set in the
// catalog by another client, whose requests the benchmark does not count.
// It returns how many tables drifted.
func driftScaleTables(t testing.TB, ctx context.Context, url string, rec *sync.Reconciler, n int, appendCommit func(table string, v int64, line []byte)) int {
	t.Helper()
	other, err := uc.New(url, uc.Options{}) // not counted: someone else's requests
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]int64{}
	for _, s := range rec.Status() {
		if s.LogVersion != nil {
			versions[s.Table] = *s.LogVersion
		}
	}
	drifted := 0
	for i := 7; i < n; i += 100 {
		name := scaleName(i)
		drifted++
		if (i/100)%2 == 0 {
			cur, ok := versions[name.String()]
			if !ok {
				t.Fatalf("drift: no log version known for %s", name)
			}
			v := cur + 1
			line := fmt.Sprintf(`{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`+"\n"+
				`{"add":{"path":"bench-%d.parquet","partitionValues":{},"size":1,"modificationTime":%d,"dataChange":true}}`+"\n",
				time.Now().UnixMilli(), v, time.Now().UnixMilli())
			appendCommit(name.Table, v, []byte(line))
			continue
		}
		lt, err := other.LoadTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.UpdateTable(ctx, name, uc.UpdateTableRequest{
			Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: lt.Metadata.TableUUID}, uc.AssertEtag{Etag: lt.Metadata.Etag}},
			Updates:      []uc.Update{uc.SetProperties{Updates: map[string]string{"bench.drift": "1"}}},
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	return drifted
}
