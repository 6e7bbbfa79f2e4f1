package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
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

func runFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRunServesAndStopsCleanly runs the daemon in-process: it becomes ready
// after its first cycle, serves metrics and status, and exits 0 when its
// context is cancelled (SIGTERM in main).
func TestRunServesAndStopsCleanly(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	addr := runFreeAddr(t)
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
