package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// This file is the harness the browser and Prometheus end-to-end tests
// share: a real `deltasync run`, in-process, against an in-memory Unity
// Catalog seeded with tables registered from real Delta logs, in states that
// give every sync status.

// externalTool returns the path an env var names (set by a .ci/setup-*.sh
// script). Without it the test skips, or fails when
// DELTASYNC_REQUIRE_EXTERNAL=1 (CI).
func externalTool(t *testing.T, env, setup string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		testenv.Missing(t, testenv.External, fmt.Sprintf("%s is not set: run `eval \"$(bash .ci/%s start)\"` first", env, setup))
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", env, p, err)
	}
	return p
}

// daemonTables are the seeded tables and the status each settles in.
var daemonTables = []struct {
	name   string
	source string // directory under ../shared/testdata/delta-logs
	want   sync.Status
}{
	// In sync from the start: nothing to do.
	{"main.sales.orders", "delta-0.8.0", sync.StatusSynced},
	// Its comment was edited in the catalog; mode sync writes it back.
	{"main.sales.letters", "basic_partitioned", sync.StatusSynced},
	// Watch-only (mode warn): a property was added in the catalog, so it
	// stays OutOfSync, cycle after cycle.
	{"main.watch.events", "cdc_ict_table", sync.StatusOutOfSync},
	// Its newest commit vanished after it was registered: the catalog
	// records a version the log no longer has, so every reconcile fails.
	{"main.sales.rollback", "delta-0.8.0", sync.StatusUnknown},
}

// watchedTable is the table that stays OutOfSync (its drift alert fires).
const watchedTable = "main.watch.events"

// e2eDaemon is a running `deltasync run`.
type e2eDaemon struct {
	addr    string // host:port of the HTTP endpoints
	token   string // bearer token the endpoints require, if any
	catalog *uctest.Server
	stderr  *lockedBuffer
}

func (d *e2eDaemon) url(path string) string { return "http://" + d.addr + path }

// get fetches path from the daemon, with its token if it has one.
func (d *e2eDaemon) get(path string) (int, string, error) {
	return e2eGet(d.url(path), d.token)
}

// lockedBuffer collects the daemon's log, written from several goroutines.
type lockedBuffer struct {
	mu  stdsync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startDaemon seeds a catalog and starts `deltasync run` against it,
// cycling every second. It returns once the daemon is ready (a cycle has
// completed); the daemon stops in t.Cleanup.
func startDaemon(t *testing.T) *e2eDaemon { t.Helper(); return startDaemonWithToken(t, "") }

// startDaemonWithToken is startDaemon with --http-token-file set to a file
// holding token, when token is not empty.
func startDaemonWithToken(t *testing.T, token string) *e2eDaemon {
	t.Helper()
	ctx := t.Context()
	srv := spectest.NewForTest(t)
	srv.AddSchema("main", "sales")
	srv.AddSchema("main", "watch")
	client, err := uc.New(srv.URL(), uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := testcorpus.Dir(t)
	tmp := t.TempDir()
	for _, tb := range daemonTables {
		dir := filepath.Join(tmp, tb.name)
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, tb.source))); err != nil {
			t.Fatalf("copying test table %s: %v", tb.source, err)
		}
		registerLog(ctx, t, client, tb.name, dir)
	}
	mutate := func(name string, fn func(*uctest.Table)) {
		if err := srv.MutateTable(name, fn); err != nil {
			t.Fatalf("mutating %s: %v", name, err)
		}
	}
	mutate("main.sales.letters", func(tb *uctest.Table) {
		c := "edited by hand in the catalog"
		tb.Comment = &c
	})
	mutate(watchedTable, func(tb *uctest.Table) { tb.Properties["owner.team"] = "edited-in-the-catalog" })
	if err := os.Remove(filepath.Join(tmp, "main.sales.rollback", "_delta_log", "00000000000000000001.json")); err != nil {
		t.Fatal(err)
	}

	cfgFile := filepath.Join(tmp, "deltasync.yaml")
	cfg := `tables:
  - include: ["main.watch.*"]
    mode: warn
  - include: ["main.sales.*"]
    mode: sync
jitter: 0s
storage:
  allowed_locations: ["file://` + filepath.ToSlash(tmp) + `/**"]
log:
  format: json
  level: info
`
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	d := &e2eDaemon{addr: addr, token: token, catalog: srv, stderr: &lockedBuffer{}}
	args := []string{"run", "--config", cfgFile, "--catalog-url", srv.URL(), "--listen", addr, "--schedule", "@every 1s"}
	if token != "" {
		tokenFile := filepath.Join(tmp, "http-token")
		if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--http-token-file", tokenFile)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	exited := make(chan int, 1)
	go func() { exited <- run(runCtx, args, nil, io.Discard, d.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-exited:
			if code != 0 {
				t.Errorf("deltasync run exited %d; log:\n%s", code, d.stderr)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("deltasync run did not stop within 30s of cancel; log:\n%s", d.stderr)
		}
	})
	d.waitReady(t, exited)
	return d
}

// registerLog registers the Delta table in dir as an EXTERNAL table, in
// sync with its log.
func registerLog(ctx context.Context, t *testing.T, client *uc.Client, fullName, dir string) {
	t.Helper()
	name, err := catalog.ParseTableName(fullName)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := deltalog.Open(ctx, dir)
	if err != nil {
		t.Fatalf("opening %s: %v", dir, err)
	}
	defer tbl.Close()
	snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	if _, err := sync.Register(ctx, kindOf(client), snap, name, "file://"+filepath.ToSlash(dir)); err != nil {
		t.Fatal(err)
	}
}

// e2ePoll calls check every interval until it returns true, for at most limit.
// It returns the last failure description when time runs out.
func e2ePoll(ctx context.Context, limit, interval time.Duration, check func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(limit)
	var last string
	for {
		ok, why := check()
		if ok {
			return true, ""
		}
		last = why
		if time.Now().After(deadline) {
			return false, last
		}
		select {
		case <-ctx.Done():
			return false, last + " (" + ctx.Err().Error() + ")"
		case <-time.After(interval):
		}
	}
}

var e2eHTTPClient = &http.Client{Timeout: 5 * time.Second}

// e2eGet fetches url, sending token as a bearer token when it is not
// empty, and returns status and body.
func e2eGet(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e2eHTTPClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// waitReady polls /readyz (bounded) until a cycle has completed, then the
// status page until every table shows the status it settles in.
func (d *e2eDaemon) waitReady(t *testing.T, exited <-chan int) {
	t.Helper()
	ok, why := e2ePoll(t.Context(), 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		select {
		case code := <-exited:
			t.Fatalf("deltasync run exited %d before it was ready; log:\n%s", code, d.stderr)
		default:
		}
		code, body, err := d.get("/readyz")
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK, fmt.Sprintf("/readyz: %d %s", code, strings.TrimSpace(body))
	})
	if !ok {
		t.Fatalf("daemon not ready within 30s: %s; log:\n%s", why, d.stderr)
	}
	ok, why = e2ePoll(t.Context(), 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		_, body, err := d.get("/")
		if err != nil {
			return false, err.Error()
		}
		got := pageStatuses(body)
		for _, tb := range daemonTables {
			if got[tb.name] != string(tb.want) {
				return false, fmt.Sprintf("status page shows %v", got)
			}
		}
		return true, ""
	})
	if !ok {
		t.Fatalf("tables did not settle: %s; log:\n%s", why, d.stderr)
	}
}

var pageRowRE = regexp.MustCompile(`<tr class="row-\w+" data-table="([^"]*)" data-status="(\w+)">`)

// pageStatuses reads table → status from the status page's HTML (as served
// or as a browser's DOM).
func pageStatuses(html string) map[string]string {
	out := map[string]string{}
	for _, m := range pageRowRE.FindAllStringSubmatch(html, -1) {
		out[m[1]] = m[2]
	}
	return out
}
