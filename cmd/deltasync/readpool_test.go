package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMaxReadBytes: storage.max_read_mib when set; else 1024 MiB, or half
// the container's memory limit when that is less; never below one read's
// budget (storage.max_load_mib).
func TestMaxReadBytes(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name                string
		configured, loadMiB int64
		container           int64
		known               bool
		want                int64
	}{
		{"set", 300, 256, 0, false, 300 * mib},
		{"set, container known", 3000, 256, 1024 * mib, true, 3000 * mib},
		{"default, no container limit", 0, 256, 0, false, 1024 * mib},
		{"default, large container", 0, 256, 8192 * mib, true, 1024 * mib},
		{"default, 1 GiB container", 0, 256, 1024 * mib, true, 512 * mib},
		{"default, small container: one read's budget", 0, 256, 300 * mib, true, 256 * mib},
		{"default, budget over 1 GiB", 0, 2048, 0, false, 2048 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := maxReadBytes(c.configured, c.loadMiB, c.container, c.known); got != c.want {
				t.Errorf("maxReadBytes(%d, %d, %d, %v) = %d MiB, want %d MiB", c.configured, c.loadMiB, c.container, c.known, got/mib, c.want/mib)
			}
		})
	}
}

// TestMaxReadMiBChecked: storage.max_read_mib must be positive and at least
// storage.max_load_mib (0 or unset: the default); the error names the keys.
func TestMaxReadMiBChecked(t *testing.T) {
	for _, c := range []struct {
		yaml, want string
	}{
		{"storage:\n  max_read_mib: -1\n", "storage.max_read_mib -1: must be positive"},
		{"storage:\n  max_read_mib: 100\n", "storage.max_read_mib 100: must be at least storage.max_load_mib (256)"},
		{"storage:\n  max_load_mib: 64\n  max_read_mib: 32\n", "storage.max_read_mib 32: must be at least storage.max_load_mib (64)"},
	} {
		cfg := writeFile(t, t.TempDir(), "bad.yaml", "catalog:\n  url: http://x/api/2.1/unity-catalog\n"+c.yaml)
		code, _, errOut := runCLI(t, nil, "check-config", "--config", cfg)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want 1 with %q\n%s", c.yaml, code, c.want, errOut)
		}
	}
	for _, good := range []string{"", "storage:\n  max_read_mib: 256\n", "storage:\n  max_read_mib: 0\n", "storage:\n  max_load_mib: 64\n  max_read_mib: 64\n"} {
		cfg := writeFile(t, t.TempDir(), "good.yaml", "catalog:\n  url: http://x/api/2.1/unity-catalog\ntables:\n  - include: cat.s.*\n"+good)
		if code, _, errOut := runCLI(t, nil, "check-config", "--config", cfg); code != 0 {
			t.Errorf("%q: exit %d, want 0\n%s", good, code, errOut)
		}
	}
}

// TestReconcilerReadsShareThePool: the tables a reconciler reads take
// their bytes from the one pool the app made with storage.max_read_mib,
// which the registry exports; every byte is back once the cycle ends.
func TestReconcilerReadsShareThePool(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("checkpoint", "a")
	tc.register("basic-dv-with-checkpoint", "b")
	a := testPlanApp(t, tc, func(cfg *config) { cfg.Storage.MaxReadMiB = 300 })
	want := "# HELP deltasync_log_read_memory_limit_bytes The shared memory pool's limit (storage.max_read_mib, in bytes); the oldest read is granted beyond it, by at most one storage.max_load_mib.\n" +
		"# TYPE deltasync_log_read_memory_limit_bytes gauge\ndeltasync_log_read_memory_limit_bytes 3.145728e+08\n"
	if err := testutil.GatherAndCompare(a.registry, strings.NewReader(want), "deltasync_log_read_memory_limit_bytes"); err != nil {
		t.Error(err)
	}
	rep := a.rec.Sync(context.Background())
	if len(rep.Results) != 2 {
		t.Fatalf("%d tables reconciled, want 2: %+v", len(rep.Results), rep)
	}
	for _, r := range rep.Results {
		if r.LogVersion == nil || r.Outcome == "failed" {
			t.Errorf("%s: %s %s", r.Table, r.Outcome, r.Reason)
		}
	}
	if a.readPool.Peak() == 0 {
		t.Error("the tables' reads took nothing from the app's pool")
	}
	if got := a.readPool.InUse(); got != 0 {
		t.Errorf("pool in use after the cycle: %d, want 0", got)
	}
}

// testPlanApp builds the app plan would run on tc's tables cat.s.*, with
// edit applied to the default configuration first; the reconciler is
// closed when the test ends.
func testPlanApp(t *testing.T, tc *testCatalog, edit func(*config)) *app {
	t.Helper()
	cfg := defaultConfig()
	cfg.Catalog.URL = tc.srv.URL()
	cfg.Tables = []tableRule{{Include: patternList{"cat.s.*"}}}
	cfg.Storage.AllowedLocations = []string{allowTemp()}
	if edit != nil {
		edit(&cfg)
	}
	c := &cli{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}
	s, err := c.settings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.newApp(s, dryRun, "plan")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.rec.Close() })
	return a
}
