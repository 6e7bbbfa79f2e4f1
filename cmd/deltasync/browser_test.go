//go:build unix

package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The status page as a browser shows it: Debian's headless Chromium loads
// the page of a running daemon, dumps its DOM and takes a screenshot (a CI
// artifact in $DELTASYNC_ARTIFACTS). Chromium comes from
// .ci/setup-chromium.sh, which sets DELTASYNC_CHROMIUM.

const (
	browserWidth  = 1280
	browserHeight = 900
)

func TestBrowserStatusPage(t *testing.T) {
	chromium := externalTool(t, "DELTASYNC_CHROMIUM", "setup-chromium.sh")
	d := startDaemon(t)

	dom := runChromium(t, chromium, "--dump-dom", d.url("/"))
	got := pageStatuses(dom)
	for _, tb := range daemonTables {
		if got[tb.name] != string(tb.want) {
			t.Errorf("rendered DOM: %s has status %q, want %q", tb.name, got[tb.name], tb.want)
		}
		if !strings.Contains(dom, `<td class="name">`+tb.name+`</td>`) {
			t.Errorf("rendered DOM lacks the name cell of %s", tb.name)
		}
		if !strings.Contains(dom, `<span class="status `+strings.ToLower(string(tb.want))+`">`+string(tb.want)+`</span>`) {
			t.Errorf("rendered DOM lacks a %s status badge", tb.want)
		}
	}
	for _, s := range []string{"<title>deltasync status</title>", `<span class="count total">4 tables</span>`, "not pushing an older snapshot"} {
		if !strings.Contains(dom, s) {
			t.Errorf("rendered DOM lacks %q", s)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	dir := os.Getenv("DELTASYNC_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "status-page.png")
	_ = os.Remove(shot) // never pass on a stale screenshot
	runChromium(t, chromium, "--screenshot="+shot, d.url("/"))
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", shot, err)
	}
	if cfg.Width != browserWidth || cfg.Height != browserHeight {
		t.Errorf("screenshot is %dx%d, want %dx%d", cfg.Width, cfg.Height, browserWidth, browserHeight)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("screenshot %s does not decode: %v", shot, err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(b))
}

// runChromium runs one headless Chromium with a fresh profile and returns
// its stdout. The whole process group is killed if it overruns.
func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(),
		"--window-size=" + strconv.Itoa(browserWidth) + "," + strconv.Itoa(browserHeight),
	}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		// Chromium's helpers (zygote, utility processes) share its group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
