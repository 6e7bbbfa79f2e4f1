package sync_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/internal/testenv"
)

// overloadTables is how many tables the overload test keeps.
const overloadTables = 12

// TestOverloadSlowCatalog runs the `deltasync run` binary against the real
// catalog through a proxy that, for a while, answers every request only
// after 5 s. The daemon must not pile up goroutines or memory (one cycle at
// a time, Concurrency workers), /readyz and /metrics must say what is
// happening while the slow cycle runs (a cycle in progress, its age and
// progress; /readyz 503 past max_cycle_duration), SIGTERM in the middle of
// it must end the process cleanly within a Kubernetes-default 30 s grace
// period, and after the slow spell a restarted daemon brings every table
// in sync.
func TestOverloadSlowCatalog(t *testing.T) {
	testenv.Suite(t)
	bin := filepath.Join(t.TempDir(), "deltasync")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/deltasync").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/deltasync: %v\n%s", err, out)
	}
	e := newEnvAt(t, ucBase(t))
	root := t.TempDir()
	w := newLogWriter(t, dirStore{root: root})
	names := map[string]catalog.TableName{}
	rg := &faultRig{t: t, env: e, w: w}
	for i := range overloadTables {
		table := fmt.Sprintf("t%02d", i)
		w.create(table)
		rg.register(table, names)
	}
	chk := newChecker(t, e.client, w, names)
	fp := newFaultProxy(t, e.client.BaseURL())
	var delay atomic.Int64
	var inFlight, maxInFlight atomic.Int64
	fp.set(func() {
		fp.before = func(r *http.Request, body []byte) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := maxInFlight.Load()
				if n <= m || maxInFlight.CompareAndSwap(m, n) {
					break
				}
			}
			chk.beforeUpdate(r, body)
			time.Sleep(time.Duration(delay.Load()))
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	cfg := filepath.Join(t.TempDir(), "deltasync.yaml")
	conf := fmt.Sprintf(`catalog:
  url: %s
storage:
  allowed_locations: ["file://%s/**"]
tables:
  - include: ["%s.s.*"]
schedule: "@every 1s"
jitter: 0s
max_cycle_duration: 8s
concurrency: 4
backoff:
  initial: 100ms
  max: 1s
listen: %s
log:
  format: json
`, strings.Replace(e.client.BaseURL(), hostOf(t, e.client.BaseURL()), hostOf(t, fp.srv.URL), 1), filepath.ToSlash(root), e.catalog, listen)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(t.TempDir(), "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := "http://" + listen
	waitFor(t, 30*time.Second, "first cycle (/readyz 200)", func() bool { return status(base+"/readyz") == 200 })
	chk.start()
	time.Sleep(2 * time.Second)
	m0 := scrape(t, base+"/metrics")
	t.Logf("before: goroutines %v, heap %v B, RSS %v B", m0["go_goroutines"], m0["go_memstats_heap_alloc_bytes"], m0["process_resident_memory_bytes"])

	// The slow spell: every catalog answer takes 5 s, while tables drift.
	delay.Store(int64(5 * time.Second))
	for _, table := range []string{"t00", "t03", "t07"} {
		w.step(table, "add_column")
	}
	var maxG, maxHeap, maxAge float64
	ready := map[int]int{}
	var runningBody, stuckBody string
	for range 20 {
		time.Sleep(time.Second)
		m := scrape(t, base+"/metrics")
		maxG = max(maxG, m["go_goroutines"])
		maxHeap = max(maxHeap, m["go_memstats_heap_alloc_bytes"])
		if m["deltasync_cycle_in_progress"] == 1 {
			maxAge = max(maxAge, float64(time.Now().UnixNano())/1e9-m["deltasync_cycle_started_timestamp_seconds"])
		}
		code, body := get(base + "/readyz")
		ready[code]++
		if code == http.StatusOK && strings.Contains(body, " running for ") {
			runningBody = body
		}
		if code == http.StatusServiceUnavailable && strings.Contains(body, "exceeded max_cycle_duration 8s") {
			stuckBody = body
		}
	}
	m1 := scrape(t, base+"/metrics")
	t.Logf("slow spell: max goroutines %v, max heap %v B, catalog requests in flight at most %d, /readyz answers %v",
		maxG, maxHeap, maxInFlight.Load(), ready)
	t.Logf("slow spell: catalog request duration sum %.1fs over %v requests; cycles %v ok / %v failed",
		m1[`deltasync_catalog_request_duration_seconds_sum`], m1[`deltasync_catalog_request_duration_seconds_count`],
		m1[`deltasync_cycles_total{result="success"}`], m1[`deltasync_cycles_total{result="failure"}`])
	// Bounded: at most Concurrency catalog requests at once, and no
	// goroutine growth beyond the workers and their connections.
	if n := maxInFlight.Load(); n > 4+1 {
		t.Errorf("%d catalog requests in flight at once; concurrency is 4 (+1 listing)", n)
	}
	if maxG > m0["go_goroutines"]+40 {
		t.Errorf("goroutines grew from %v to %v under a slow catalog", m0["go_goroutines"], maxG)
	}
	if maxHeap > 4*m0["go_memstats_heap_alloc_bytes"]+32<<20 {
		t.Errorf("heap grew from %v to %v B under a slow catalog", m0["go_memstats_heap_alloc_bytes"], maxHeap)
	}
	if m1[`deltasync_catalog_request_duration_seconds_sum`]-m0[`deltasync_catalog_request_duration_seconds_sum`] < 5 {
		t.Errorf("the catalog request duration metric does not show the 5 s answers")
	}
	// While the slow cycle runs, not only after it: the metrics show a
	// cycle in progress for longer than one 5 s answer, /readyz describes
	// it (200) and, past max_cycle_duration, answers 503 saying why.
	t.Logf("slow spell: oldest running cycle seen in the metrics %.1fs; /readyz while running %q, past the limit %q", maxAge, runningBody, stuckBody)
	if maxAge < 5 {
		t.Errorf("deltasync_cycle_in_progress/_started_timestamp_seconds never showed a cycle running for 5 s (oldest %.1fs)", maxAge)
	}
	if !strings.Contains(runningBody, "tables reconciled") {
		t.Errorf("/readyz never answered 200 with the running cycle's age and progress")
	}
	if !strings.Contains(stuckBody, " running for ") || !strings.Contains(stuckBody, "tables reconciled") {
		t.Errorf("/readyz never answered 503 naming max_cycle_duration, the cycle's age and progress (answers %v)", ready)
	}

	// SIGTERM in the middle of the slow spell.
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	const grace = 30 * time.Second
	select {
	case err := <-exited:
		took := time.Since(start)
		t.Logf("SIGTERM under a 5 s catalog: exited after %s (%v)", took.Round(100*time.Millisecond), err)
		if err != nil {
			t.Errorf("SIGTERM: exit %v, want a clean exit", err)
		}
	case <-time.After(grace):
		t.Errorf("SIGTERM under a 5 s catalog: still running after the %s grace period", grace)
		_ = cmd.Process.Kill()
		t.Logf("killed: %v", <-exited)
	}
	delay.Store(0)
	out, err := exec.Command(bin, "once", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Errorf("deltasync once after the slow spell: %v\n%s", err, tail(out, 4000))
	}
	chk.stopPolling()
	outOf := chk.outOfSync(t.Context())
	for _, o := range outOf {
		t.Errorf("out of sync after the slow spell: %s", o)
	}
	for _, v := range chk.violationList() {
		t.Errorf("invariant violated: %s", v)
	}
	for _, bad := range w.audit(t) {
		t.Errorf("storage: %s", bad)
	}
	reportRow(t, reliabilityRow{Fault: "catalog answering in 5 s for 20 s (/readyz 503 past max_cycle_duration), then SIGTERM (daemon binary)", Injected: int(m1[`deltasync_catalog_request_duration_seconds_count`] - m0[`deltasync_catalog_request_duration_seconds_count`]),
		Cycles:     int(m1[`deltasync_cycles_total{result="success"}`]+m1[`deltasync_cycles_total{result="failure"}`]) + 1,
		Violations: chk.violationCount(), InSync: overloadTables - len(outOf), Tables: overloadTables})
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func status(u string) int {
	code, _ := get(u)
	return code
}

// get returns the status code and body of a GET (0 when it failed).
func get(u string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads a Prometheus text exposition into name{labels} → value.
func scrape(t *testing.T, u string) map[string]float64 {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("scrape %s: %v", u, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		name := line[:i]
		out[name] += v
		if j := strings.IndexByte(name, '{'); j >= 0 {
			out[name[:j]] += v // summed over labels
		}
	}
	return out
}
