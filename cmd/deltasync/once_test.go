package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

func TestOnceExitCodes(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "synced")
	tc.register("delta-0.8.0", "warned")
	tc.mutate("synced", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })

	var mu stdsync.Mutex
	var pings int
	var pushed string
	hooks := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/ping" && r.Method == http.MethodGet:
			pings++
		case strings.HasPrefix(r.URL.Path, "/metrics/job/deltasync"):
			b, _ := io.ReadAll(r.Body)
			pushed += string(b)
		}
	}))
	defer hooks.Close()

	base := []string{"once", "--catalog-url", tc.srv.URL(), "--log-level", "error", "--allow-location", allowTemp()}
	// All good: the drift is synced.
	code, out, errOut := runCLI(t, nil, append(base, "--include", "cat.s.synced",
		"--heartbeat-url", hooks.URL+"/ping", "--pushgateway-url", hooks.URL)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	summary := regexp.MustCompile(`(?m)^deltasync: 1 tables: 0 unchanged, 1 synced, 0 flagged, 0 failed in \S+$`)
	if !summary.MatchString(out) {
		t.Errorf("no summary line:\n%s", out)
	}
	mu.Lock()
	if pings != 1 || !strings.Contains(pushed, "deltasync_syncs_total") {
		t.Errorf("heartbeat pings %d, pushed %d bytes", pings, len(pushed))
	}
	mu.Unlock()

	// Drift remains on a watch-only (warn) table: 2.
	tc.mutate("warned", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	code, out, _ = runCLI(t, nil, append(base, "--include", "cat.s.*", "--mode", "warn")...)
	if code != 2 || !strings.Contains(out, "1 unchanged, 0 synced, 1 flagged, 0 failed") {
		t.Errorf("warn drift: exit %d\n%s", code, out)
	}

	// A table failed (named explicitly, does not exist): 1.
	code, out, _ = runCLI(t, nil, append(base, "--include", "cat.s.synced", "--include", "cat.s.missing")...)
	if code != 1 || !strings.Contains(out, "1 failed") {
		t.Errorf("missing table: exit %d\n%s", code, out)
	}
}
