//go:build unix

package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gocloud.dev/blob"
	"golang.org/x/time/rate"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/fakes3"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// The fleet on an object store (BENCHMARKS.md, "A fleet on S3, sync
// level"): the tables of BenchmarkScale (delta-rs-written logs, a schema
// and table id each) copied into one bucket of an indexed gofakes3
// (internal/fakes3) served by a process of its own (this test binary
// re-executed as TestScaleS3Server), every storage request delayed by
// DELTASYNC_SCALE_S3_LATENCY (default 20ms); uctest in another process,
// every request delayed by DELTASYNC_SCALE_LATENCY (default 10ms here).
// One Reconciler with the default settings (DELTASYNC_SCALE_CONCURRENCY
// to change Concurrency).
//
//	DELTASYNC_SCALE_S3_TABLES=10000 DELTASYNC_CACHE=$PWD/.cache DELTASYNC_PYTHON=... \
//	  go test ./sync -run '^$' -bench '^BenchmarkScaleS3$' -benchtime 1x -v -timeout 0
const (
	scaleS3TablesEnv  = "DELTASYNC_SCALE_S3_TABLES"
	scaleS3ServeEnv   = "DELTASYNC_SCALE_S3_SERVE"
	scaleS3LatencyEnv = "DELTASYNC_SCALE_S3_LATENCY"
	scaleS3StatsPath  = "/_fleet_stats" // not a bucket name S3 allows
	// scaleS3HotEnv, when set, puts the odd tables in a second bucket,
	// "hot", whose next N requests POST scaleS3ThrottlePath?n=N answers
	// with 503 SlowDown (BenchmarkScaleS3Throttled). POST
	// scaleS3ThrottlePath?rate=R&burst=B throttles it by rate instead, as
	// S3 does: a token bucket of B tokens filled at R per second, every
	// request finding it empty answered SlowDown (rate=0 ends it).
	scaleS3HotEnv       = "DELTASYNC_SCALE_S3_HOT"
	scaleS3ThrottlePath = "/_fleet_throttle"
)

// s3Stats are what the S3 process saw since the last reset.
type s3Stats struct {
	Requests    int64 `json:"requests"`
	PeakFlight  int64 `json:"peak_in_flight"`
	ProcessCPUs int64 `json:"cpu_ms"`
	// With scaleS3HotEnv: requests to "lake" and when the last of them
	// was answered (Unix ns), and the SlowDowns "hot" answered.
	LakeRequests int64 `json:"lake_requests"`
	LakeLastNs   int64 `json:"lake_last_ns"`
	Throttled    int64 `json:"throttled"`
	// The same of "hot": its requests (throttled or not) and when the
	// last of them was answered.
	HotRequests int64 `json:"hot_requests"`
	HotLastNs   int64 `json:"hot_last_ns"`
}

// TestScaleS3Server is the S3 process of BenchmarkScaleS3; it does nothing
// unless started by it. It copies every table's _delta_log into the bucket
// "lake" (key t000042/_delta_log/...), prints its URL and serves until its
// stdin is closed. GET scaleS3StatsPath returns its counts since the
// previous such request.
func TestScaleS3Server(t *testing.T) {
	dir := os.Getenv(scaleS3ServeEnv)
	if dir == "" {
		t.Skip("run by BenchmarkScaleS3")
	}
	n, _ := strconv.Atoi(os.Getenv(scaleS3TablesEnv))
	backend := fakes3.NewIndexed()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	twoBuckets := os.Getenv(scaleS3HotEnv) != ""
	if twoBuckets {
		if err := backend.CreateBucket("hot"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		bucket := "lake"
		if twoBuckets && i%2 == 1 {
			bucket = "hot"
		}
		logDir := filepath.Join(dir, fmt.Sprintf("t%06d", i), "_delta_log")
		entries, err := os.ReadDir(logDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(logDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("t%06d/_delta_log/%s", i, e.Name())
			if _, err := backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	latency := 20 * time.Millisecond
	if v := os.Getenv(scaleS3LatencyEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", scaleS3LatencyEnv, err)
		}
		latency = d
	}
	fake := gofakes3.New(backend).Server()
	var requests, inFlight, peak, lakeRequests, lakeLast, throttleLeft, throttled, hotRequests, hotLast atomic.Int64
	var hotRate atomic.Pointer[rate.Limiter] // nil: hot is not throttled by rate
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case scaleS3StatsPath:
			st := s3Stats{Requests: requests.Swap(0), PeakFlight: peak.Swap(inFlight.Load()), ProcessCPUs: cpuTime().Milliseconds(),
				LakeRequests: lakeRequests.Swap(0), LakeLastNs: lakeLast.Swap(0), Throttled: throttled.Swap(0),
				HotRequests: hotRequests.Swap(0), HotLastNs: hotLast.Swap(0)}
			_ = json.NewEncoder(w).Encode(st)
			return
		case scaleS3ThrottlePath:
			q := r.URL.Query()
			if q.Has("rate") {
				perSec, _ := strconv.ParseFloat(q.Get("rate"), 64)
				burst, _ := strconv.Atoi(q.Get("burst"))
				if perSec <= 0 {
					hotRate.Store(nil)
				} else {
					hotRate.Store(rate.NewLimiter(rate.Limit(perSec), max(burst, 1)))
				}
				return
			}
			k, _ := strconv.ParseInt(q.Get("n"), 10, 64)
			throttleLeft.Store(k)
			return
		}
		bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if bucket == "lake" {
			defer func() { lakeLast.Store(time.Now().UnixNano()) }()
			lakeRequests.Add(1)
		}
		if bucket == "hot" {
			defer func() { hotLast.Store(time.Now().UnixNano()) }()
			hotRequests.Add(1)
		}
		requests.Add(1)
		now := inFlight.Add(1)
		p := peak.Load()
		for now > p && !peak.CompareAndSwap(p, now) {
			p = peak.Load()
		}
		defer inFlight.Add(-1)
		time.Sleep(latency) // the round trip to the store
		if bucket == "hot" && (throttleLeft.Add(-1) >= 0 || !allow(hotRate.Load())) {
			throttled.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	runtime.GC()
	fmt.Printf("\nGOFAKES3_URL=%s\n", srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// allow reports whether l, if any, lets one more request through now.
func allow(l *rate.Limiter) bool { return l == nil || l.Allow() }

// startScaleS3 starts TestScaleS3Server over n tables of dir and returns
// its URL.
func startScaleS3(t testing.TB, n int, dir string, extraEnv ...string) string {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestScaleS3Server$", "-test.timeout=0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
			child.Env = append(child.Env, kv)
		}
	}
	child.Env = append(child.Env, scaleS3ServeEnv+"="+dir, fmt.Sprintf("%s=%d", scaleS3TablesEnv, n))
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
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = child.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "GOFAKES3_URL="); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return u
		}
	}
	t.Fatalf("S3 process ended without serving: %v", sc.Err())
	return ""
}

func takeS3Stats(t testing.TB, srvURL string) s3Stats {
	t.Helper()
	resp, err := http.Get(srvURL + scaleS3StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st s3Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// BenchmarkScaleS3 runs the fleet-on-S3 scenario once: first cycle (every
// log loaded), steady cycle (nothing changed), 1% drift (half a new commit
// in the bucket, half a property set in the catalog). Its checks of what
// each cycle did stay, as in BenchmarkScale.
func BenchmarkScaleS3(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv(scaleS3TablesEnv))
	if n <= 0 || os.Getenv(scaleS3ServeEnv) != "" || os.Getenv(scaleServeEnv) != "" {
		b.Skip("set DELTASYNC_SCALE_S3_TABLES=N to run the fleet-on-S3 benchmark")
	}
	catalogLatency := os.Getenv(scaleLatencyEnv)
	if catalogLatency == "" {
		catalogLatency = "10ms"
	}
	s3Latency := os.Getenv(scaleS3LatencyEnv)
	if s3Latency == "" {
		s3Latency = "20ms" // TestScaleS3Server's default
	}
	if os.Getenv("DELTASYNC_SCALE_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 4096 // the default 512 KiB samples a 500-byte state too coarsely
	}
	dir := scaleTables(b, n)
	s3URL := startScaleS3(b, n, dir)
	ucURL := startScaleCatalog(b, n, dir, scaleLocationEnv+"=s3://lake", scaleLatencyEnv+"="+catalogLatency)
	b.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	b.Setenv("AWS_REGION", "us-east-1")
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	var mu stdsync.Mutex
	ops := map[string]int{}
	reg := prometheus.NewRegistry()
	metrics := metrics.New(reg, "scale")
	opts := sync.Options{Metrics: metrics, ResyncInterval: time.Hour} // everything else: defaults
	if c, err := strconv.Atoi(os.Getenv("DELTASYNC_SCALE_CONCURRENCY")); err == nil && c > 0 {
		opts.Concurrency = c
	}
	idle := 4 + 2 // as deltasync run builds the client: concurrency + 2
	if opts.Concurrency > 0 {
		idle = opts.Concurrency + 2
	}
	client, err := uc.New(ucURL, uc.Options{IdleConnsPerHost: idle,
		Observer: func(op string, status int, d time.Duration, err error) {
			metrics.ObserveCatalog(op, status, d, err)
			mu.Lock()
			ops[op]++
			mu.Unlock()
		}})
	if err != nil {
		b.Fatal(err)
	}
	opts.Catalog = kindOf(client)
	if opts.Selector, err = sync.NewSelector([]sync.Rule{{Include: []string{"scale.*.*"}}}); err != nil {
		b.Fatal(err)
	}
	bucket := map[string]string{"endpoint": s3URL, "region": "us-east-1", "use_path_style": "true", "disable_https": "true"}
	if opts.Storage, err = sync.NewStoragePolicy([]string{"s3://lake/**"}, []sync.BucketOptions{{Location: "s3://lake", Options: bucket}}); err != nil {
		b.Fatal(err)
	}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	opts.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	runtime.GC()
	// DELTASYNC_SCALE_MEMLIMIT=360MiB: the soft memory limit run sets from
	// a 400 MiB container, on this process only (GOMEMLIMIT would also
	// reach the S3 and catalog processes, which hold the whole fleet).
	if v := os.Getenv("DELTASYNC_SCALE_MEMLIMIT"); v != "" {
		mib, err := strconv.Atoi(strings.TrimSuffix(v, "MiB"))
		if err != nil {
			b.Fatalf("DELTASYNC_SCALE_MEMLIMIT %q: want e.g. 360MiB", v)
		}
		debug.SetMemoryLimit(int64(mib) << 20)
		defer debug.SetMemoryLimit(math.MaxInt64) // no limit, the default
	}
	baseRSS := peakRSSMiB()
	rec, err := sync.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	scrapes := metrics.Handler(reg, promhttp.HandlerOpts{})
	ctx := context.Background()

	type s3Cycle struct {
		scaleCycle
		s3 s3Stats
	}
	var cycles []s3Cycle
	// DELTASYNC_SCALE_HEAPPROFILE_AT=40s,3s (with
	// DELTASYNC_SCALE_HEAPPROFILE=file): what is live that far into the
	// first and the first steady cycle, after a forced GC, to
	// file.first-mid and file.steady-mid.
	midAt := map[string]time.Duration{}
	if v := os.Getenv("DELTASYNC_SCALE_HEAPPROFILE_AT"); v != "" {
		at := strings.Split(v, ",")
		first, err1 := time.ParseDuration(at[0])
		steady, err2 := time.ParseDuration(at[len(at)-1])
		if len(at) != 2 || err1 != nil || err2 != nil || os.Getenv("DELTASYNC_SCALE_HEAPPROFILE") == "" {
			b.Fatalf("DELTASYNC_SCALE_HEAPPROFILE_AT %q: want two durations (first cycle, steady cycle), e.g. 40s,3s, and DELTASYNC_SCALE_HEAPPROFILE set", v)
		}
		midAt["first"], midAt["steady"] = first, steady
	}
	cycle := func(name string) *sync.Report {
		mu.Lock()
		clear(ops)
		mu.Unlock()
		l0, g0 := storageRequests(b, scrapes)
		takeS3Stats(b, s3URL)
		cpu0, start, stopSampling := cpuTime(), time.Now(), sampleHeap()
		if d, ok := midAt[name]; ok {
			delete(midAt, name) // once: the first steady cycle only
			midDone := make(chan struct{})
			timer := time.AfterFunc(d, func() {
				defer close(midDone)
				writeHeapProfile(b, os.Getenv("DELTASYNC_SCALE_HEAPPROFILE")+"."+name+"-mid")
			})
			defer func() { // a profile being written is finished before the next cycle
				if !timer.Stop() {
					<-midDone
				}
			}()
		}
		rep := rec.Sync(ctx)
		debug.FreeOSMemory() // as run does after each cycle
		c := s3Cycle{scaleCycle: scaleCycle{name: name, wall: time.Since(start), cpu: cpuTime() - cpu0, heap: stopSampling(), n: len(rep.Results),
			unchanged: rep.Count(sync.OutcomeUnchanged), synced: rep.Count(sync.OutcomeSynced), peakRSSMiB: peakRSSMiB()}}
		c.s3 = takeS3Stats(b, s3URL)
		l1, g1 := storageRequests(b, scrapes)
		c.lists, c.gets = l1-l0, g1-g0
		mu.Lock()
		c.catalogReqs = copyCounts(ops)
		mu.Unlock()
		cycles = append(cycles, c)
		if rep.Failed() || len(rep.Results) != n {
			b.Fatalf("%s cycle: %s\n%s", name, rep.Summary(), reportText(rep))
		}
		return rep
	}
	var load [][3]float64
	loadavg := func() {
		var l [3]float64
		if data, err := os.ReadFile("/proc/loadavg"); err == nil {
			_, _ = fmt.Sscan(string(data), &l[0], &l[1], &l[2])
		}
		load = append(load, l)
	}
	loadavg()
	if rep := cycle("first"); rep.Count(sync.OutcomeUnchanged) != n {
		b.Errorf("first cycle: %s, want every table unchanged", rep.Summary())
	}
	loadavg()
	// DELTASYNC_SCALE_HEAPPROFILE=file writes the live heap (after a
	// forced GC) at the first cycle's end to file.first and after the
	// steady cycles to file, as TestScale does.
	heapProfile := os.Getenv("DELTASYNC_SCALE_HEAPPROFILE")
	if heapProfile != "" {
		runtime.GC()
		writeHeapProfile(b, heapProfile+".first")
	}
	// DELTASYNC_SCALE_CPUPROFILE=file profiles the steady cycles;
	// DELTASYNC_SCALE_STEADY=k runs k of them (default 1).
	steady := 1
	if k, err := strconv.Atoi(os.Getenv("DELTASYNC_SCALE_STEADY")); err == nil && k > 1 {
		steady = k
	}
	for i := range steady {
		if p := os.Getenv("DELTASYNC_SCALE_CPUPROFILE"); p != "" && i == 0 {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
		}
		if rep := cycle("steady"); rep.Count(sync.OutcomeUnchanged) != n {
			b.Errorf("steady cycle: %s", rep.Summary())
		}
		loadavg()
	}
	pprof.StopCPUProfile()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if heapProfile != "" {
		writeHeapProfile(b, heapProfile)
	}
	b.Logf("live heap after the steady cycles (forced GC): %.0f MiB, %.2f KiB per table (the harness's own state included)",
		float64(ms.HeapAlloc)/(1<<20), float64(ms.HeapAlloc)/1024/float64(n))
	floorCPU, floorWall := s3ListFloor(b, ctx, s3URL, dir, n)
	loadavg()
	drifted := scaleDriftS3(b, ctx, ucURL, s3URL, rec, n)
	rep := cycle("1% drift")
	if rep.Count(sync.OutcomeSynced) != drifted || rep.Count(sync.OutcomeUnchanged) != n-drifted {
		b.Errorf("drift cycle: %s, want %d synced", rep.Summary(), drifted)
	}
	loadavg()
	b.Logf("%d tables on S3 (gofakes3 indexed, own process, %s per request), uctest (own process, %s per request), GOMAXPROCS %d, Concurrency %d (0: default)",
		n, s3Latency, catalogLatency, runtime.GOMAXPROCS(0), opts.Concurrency)
	b.Logf("process RSS before the Reconciler existed: %.0f MiB; load average (1/5/15 min) before each cycle and after the last: %v", baseRSS, load)
	b.Logf("| cycle | wall | CPU | CPU per table | catalog req/table | storage LIST/table | storage GET/table | S3 requests/table (server) | peak in flight (server) | S3 server CPU | peak RSS | max live / goal heap | outcomes |")
	b.Logf("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	b.Logf("request floor: one LIST per table after its latest commit, straight through gocloud's s3blob (the AWS SDK), 64 in flight, nothing else: %.2f s wall, %.3f ms CPU per table",
		floorWall.Seconds(), float64(floorCPU.Microseconds())/1000/float64(n))
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/float64(n), "list-floor-cpu-ms/table")
	var prevServerCPU int64
	for i, c := range cycles {
		total := 0
		for _, v := range c.catalogReqs {
			total += v
		}
		serverCPU := "–"
		if i > 0 {
			serverCPU = fmt.Sprintf("%.1f s", float64(c.s3.ProcessCPUs-prevServerCPU)/1000)
		}
		prevServerCPU = c.s3.ProcessCPUs
		b.Logf("| %s | %.2f s | %.2f s | %.3f ms | %.4f %v | %.3f | %.3f | %.3f | %d | %s | %.0f MiB | %.0f / %.0f MiB | %d unchanged, %d synced |",
			c.name, c.wall.Seconds(), c.cpu.Seconds(), float64(c.cpu.Microseconds())/1000/float64(n),
			float64(total)/float64(n), c.catalogReqs, c.lists/float64(n), c.gets/float64(n), float64(c.s3.Requests)/float64(n), c.s3.PeakFlight,
			serverCPU, c.peakRSSMiB, float64(c.heap.live)/(1<<20), float64(c.heap.goal)/(1<<20), c.unchanged, c.synced)
		name := strings.NewReplacer(" ", "_", "%", "pct").Replace(c.name)
		b.ReportMetric(c.wall.Seconds(), name+"-s")
		b.ReportMetric(float64(c.cpu.Microseconds())/1000/float64(n), name+"-cpu-ms/table")
	}
}

// scaleDriftS3 is scaleDrift on the bucket: the new commits are written
// to the bucket (a writer appended), the catalog edits are the same.
func scaleDriftS3(t testing.TB, ctx context.Context, ucURL, s3URL string, rec *sync.Reconciler, n int) int {
	t.Helper()
	bkt, err := blob.OpenBucket(ctx, "s3://lake?endpoint="+s3URL+"&region=us-east-1&use_path_style=true&disable_https=true")
	if err != nil {
		t.Fatal(err)
	}
	defer bkt.Close()
	return driftScaleTables(t, ctx, ucURL, rec, n, func(table string, v int64, line []byte) {
		if err := bkt.WriteAll(ctx, fmt.Sprintf("%s/_delta_log/%020d.json", table, v), line, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// s3ListFloor sends the request a steady check sends for each of the n
// tables — a LIST of its _delta_log/ after its latest commit — straight
// through a gocloud s3blob bucket (the AWS SDK), 64 at once as the
// default per-bucket limit allows, and nothing else: what the steady
// cycle's CPU per table is measured against.
func s3ListFloor(t testing.TB, ctx context.Context, s3URL, dir string, n int) (cpu, wall time.Duration) {
	t.Helper()
	bkt, err := blob.OpenBucket(ctx, "s3://lake?endpoint="+s3URL+"&region=us-east-1&use_path_style=true&disable_https=true")
	if err != nil {
		t.Fatal(err)
	}
	defer bkt.Close()
	after := make([]string, n)
	for i := range n {
		entries, err := os.ReadDir(filepath.Join(dir, fmt.Sprintf("t%06d", i), "_delta_log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".json") && len(e.Name()) == 25 {
				after[i] = fmt.Sprintf("t%06d/_delta_log/%s", i, e.Name()) // sorted: the last is the latest
			}
		}
	}
	next := make(chan int)
	var wg stdsync.WaitGroup
	var (
		mu       stdsync.Mutex
		firstErr error
	)
	cpu0, start := cpuTime(), time.Now()
	for range 64 {
		wg.Go(func() {
			for i := range next {
				startAfter := after[i]
				_, _, err := bkt.ListPage(ctx, blob.FirstPageToken, 1000, &blob.ListOptions{
					Prefix: fmt.Sprintf("t%06d/_delta_log/", i),
					BeforeList: func(as func(any) bool) error {
						var in *s3.ListObjectsV2Input
						if as(&in) {
							in.StartAfter = aws.String(startAfter)
						}
						return nil
					},
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	cpu, wall = cpuTime()-cpu0, time.Since(start)
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return cpu, wall
}
