package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testenv"
)

func runGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRunServesAndStopsCleanly runs the daemon in-process: it becomes ready
// after its first cycle, serves metrics and status, and exits 0 when its
// context is cancelled (SIGTERM in main).
func TestRunServesAndStopsCleanly(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"run", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--listen", addr, "--allow-location", allowTemp(),
			"--schedule", "@every 1h", "--log-level", "error"}, nil, io.Discard, io.Discard)
	}()
	base := "http://" + addr
	// Wait (not a timing assertion) until the first cycle has completed.
	ready := false
	for i := 0; i < 200 && !ready; i++ {
		if code, _ := runGet(t, base+"/readyz"); code == http.StatusOK {
			ready = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !ready {
		t.Fatal("never became ready")
	}
	if code, _ := runGet(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d", code)
	}
	code, metrics := runGet(t, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, `deltasync_table_info{mode="sync",sync_status="Synced",table="cat.s.t",table_type="EXTERNAL"} 1`) {
		t.Errorf("/metrics %d:\n%s", code, metrics)
	}
	// Request counts come from the catalog and storage observer hooks.
	for _, want := range []string{`deltasync_catalog_requests_total{code="200",operation="loadTable"}`,
		`deltasync_storage_requests_total{op="list",result="ok"}`, `deltasync_cycles_total{result="success"} 1`,
		`deltasync_build_info{`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, body := runGet(t, base+"/"); code != http.StatusOK || !strings.Contains(body, "cat.s.t") {
		t.Errorf("/ %d: %s", code, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exit %d after cancel, want 0", code)
	}
}

// TestReadyzShowsRunningCycle: /readyz always describes the running (or
// last) cycle, and answers 503 while a cycle has been running longer than
// max_cycle_duration — here a cycle stuck on a catalog that stopped
// answering after the first cycle — and 200 again once it has ended.
func TestReadyzShowsRunningCycle(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	target, _ := url.Parse(tc.srv.URL())
	var hang atomic.Bool
	release := make(chan struct{})
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	catalogURL := strings.Replace(tc.srv.URL(), target.Host, strings.TrimPrefix(front.URL, "http://"), 1)
	cfg := filepath.Join(t.TempDir(), "deltasync.yaml")
	if err := os.WriteFile(cfg, []byte("max_cycle_duration: 1s\njitter: 0s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"run", "--config", cfg, "--catalog-url", catalogURL, "--include", "cat.s.*", "--listen", addr,
			"--allow-location", allowTemp(), "--schedule", "@every 1s", "--log-level", "error"}, nil, io.Discard, io.Discard)
	}()
	base := "http://" + addr
	// Polls (bounded, not a timing assertion) until /readyz answers want.
	await := func(what string, ok func(code int, body string) bool) (int, string) {
		t.Helper()
		var code int
		var body string
		for range 400 {
			if code, body = runGet(t, base+"/readyz"); ok(code, body) {
				return code, body
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("waiting for %s: /readyz %d %q", what, code, body)
		return 0, ""
	}
	_, body := await("the first cycle", func(code int, _ string) bool { return code == http.StatusOK })
	if !strings.HasPrefix(body, "ok\ncycle ") || !strings.Contains(body, "1 of 1 tables reconciled") {
		t.Errorf("/readyz after a cycle: %q; want ok and the cycle's progress", body)
	}
	hang.Store(true)
	_, body = await("a cycle running past max_cycle_duration", func(code int, _ string) bool { return code == http.StatusServiceUnavailable })
	if !strings.Contains(body, "exceeded max_cycle_duration 1s") || !strings.Contains(body, " running for ") ||
		!strings.Contains(body, "0 of ") {
		t.Errorf("/readyz with a stuck cycle: %q; want the limit, the cycle's age and its progress", body)
	}
	code, metrics := runGet(t, base+"/metrics")
	if code != http.StatusOK || !strings.Contains(metrics, "\ndeltasync_cycle_in_progress 1\n") {
		t.Errorf("/metrics during the stuck cycle lacks deltasync_cycle_in_progress 1")
	}
	hang.Store(false)
	close(release)
	await("the stuck cycle to end", func(code int, _ string) bool { return code == http.StatusOK })
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exit %d after cancel, want 0", code)
	}
}

// TestRunReleasesMemoryAfterEachCycle: the daemon, not the library, returns
// a cycle's garbage to the OS (releaseMemory, a forced collection) as each
// cycle ends; a one-shot run forces none.
func TestRunReleasesMemoryAfterEachCycle(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	if code := run(context.Background(), []string{"once", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*",
		"--allow-location", allowTemp(), "--log-level", "error"}, nil, io.Discard, io.Discard); code != 0 {
		t.Fatalf("once exit %d", code)
	}
	if got := forced() - before; got != 0 {
		t.Errorf("once forced %d collections, want 0", got)
	}
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	before = forced()
	go func() {
		done <- run(ctx, []string{"run", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--listen", addr, "--allow-location", allowTemp(),
			"--schedule", "@every 1h", "--log-level", "error"}, nil, io.Discard, io.Discard)
	}()
	// Wait (not a timing assertion) for the first cycle to end.
	for i := 0; i < 200 && forced() == before; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if got := forced() - before; got != 1 {
		t.Errorf("after the first cycle: %d forced collections, want 1", got)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exit %d after cancel, want 0", code)
	}
}
