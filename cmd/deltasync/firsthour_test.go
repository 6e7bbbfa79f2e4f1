package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testenv"
)

// TestFirstHour runs .ci/first-hour.sh: a newcomer's first hour from a
// fresh clone of HEAD (demo, make build, demo --serve, inspect, plan, the
// printed run command, status page, a drift fixed live, Ctrl-C). It builds
// the binary twice (go run, make build) from the shared build cache, so
// after go vet it compiles only this module's packages. Skipped with
// -short, and when git, make or curl is missing (a failure under
// DELTASYNC_REQUIRE_EXTERNAL=1).
func TestFirstHour(t *testing.T) {
	testenv.Suite(t) // the first-hour replay builds the binary
	for _, tool := range []string{"git", "make", "curl", "go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, testenv.External, tool+" not found")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, ".ci", "first-hour.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("first-hour.sh:\n%s", out)
	if err != nil {
		t.Fatalf("first-hour.sh: %v", err)
	}
}

// make test without ../shared stops at once with one sentence naming what
// is missing and where it is expected (it used to panic in five packages).
func TestMakeTestNeedsShared(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "shared")
	cmd := exec.Command("make", "-s", "test", "SHARED="+missing)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make test without %s succeeded:\n%s", missing, out)
	}
	want := "make test: " + missing + "/spec and " + missing + "/testdata/delta-logs are missing: " +
		"check out the shared test data beside this repository, at " + filepath.Dir(root) + "/shared.\n"
	if got := string(out); !strings.HasPrefix(got, want) || strings.Contains(got, "setup-") || strings.Contains(got, "panic") {
		t.Errorf("make test output:\n%s\nwant it to start with:\n%s", got, want)
	}
}

// setup-azurite.sh stop returns only once the process is gone: one that
// ignores SIGTERM is killed, and the pid file stays until then.
func TestAzuriteStopMeansStopped(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	stubborn := exec.Command("bash", "-c", `trap "" TERM; while :; do sleep 0.2; done`)
	if err := stubborn.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = stubborn.Wait(); close(exited) }()
	t.Cleanup(func() { _ = stubborn.Process.Kill() })
	pidFile := filepath.Join(cache, "azurite.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(stubborn.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, ".ci", "setup-azurite.sh"), "stop")
	cmd.Env = append(os.Environ(), "DELTASYNC_CACHE="+cache, "AZURITE_STOP_GRACE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("the process is still running after stop returned:\n%s", out)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	if !strings.Contains(string(out), "ignored SIGTERM for 1s; sending SIGKILL") {
		t.Errorf("stop output:\n%s", out)
	}
}
