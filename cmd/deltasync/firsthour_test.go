package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFirstHour runs .ci/first-hour.sh: a newcomer's first hour from a
// fresh clone of HEAD (demo, make build, demo --serve, inspect, plan, the
// printed run command, status page, a drift fixed live, Ctrl-C). It builds
// the binary twice (go run, make build) from the shared build cache, so
// after go vet it compiles only this module's packages. Skipped with
// -short, and when git, make or curl is missing (a failure under
// DELTASYNC_REQUIRE_EXTERNAL=1).
func TestFirstHour(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the first-hour replay builds the binary")
	}
	for _, tool := range []string{"git", "make", "curl", "go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("DELTASYNC_REQUIRE_EXTERNAL") == "1" {
				t.Fatalf("%s not found (DELTASYNC_REQUIRE_EXTERNAL=1)", tool)
			}
			t.Skipf("%s not found", tool)
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
