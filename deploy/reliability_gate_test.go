package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gateRepo is a scratch git repository holding the real Makefile and
// .ci/reliability-gate.sh, and a stand-in .ci/release.sh that only marks
// that it ran: `make release` in it shows whether the gate let the build
// start.
type gateRepo struct {
	t   *testing.T
	dir string
}

func newGateRepo(t *testing.T) *gateRepo {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	g := &gateRepo{t: t, dir: t.TempDir()}
	g.write("Makefile", readFile(t, "../Makefile"))
	g.write(".ci/reliability-gate.sh", readFile(t, "../.ci/reliability-gate.sh"))
	g.write(".ci/release.sh", "#!/usr/bin/env bash\ntouch released\n")
	for _, f := range []string{"sync/reconcile.go", "deltalog/replay.go", "catalog/client.go", "cmd/main.go", "README.md"} {
		g.write(f, "v1\n")
	}
	g.git("init", "-q")
	g.commit("first")
	return g
}

func (g *gateRepo) write(rel, content string) {
	g.t.Helper()
	p := filepath.Join(g.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gateRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = g.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g *gateRepo) commit(msg string) string {
	g.t.Helper()
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

// report writes RELIABILITY.md as .ci/reliability.sh does, recording rev
// and result, and commits it.
func (g *gateRepo) report(rev, result string) {
	g.t.Helper()
	g.write("RELIABILITY.md", "<!-- revision: "+rev+" -->\n<!-- result: "+result+" -->\n# Reliability\n")
	g.commit("reliability")
}

// release runs `make release` with extra environment; it returns whether
// the (stand-in) release build ran, and what make said.
func (g *gateRepo) release(env ...string) (bool, string) {
	g.t.Helper()
	_ = os.Remove(filepath.Join(g.dir, "released"))
	cmd := exec.Command("make", "-s", "release")
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	_, statErr := os.Stat(filepath.Join(g.dir, "released"))
	ran := statErr == nil
	if ran != (err == nil) {
		g.t.Fatalf("make release: exit %v but the release build ran: %v\n%s", err, ran, out)
	}
	return ran, string(out)
}

// TestReleaseRefusesStaleReliabilityReport: `make release` builds only
// while RELIABILITY.md records a passing run at a revision whose sync/,
// deltalog/ and catalog/ are HEAD's and the work tree's; otherwise it
// refuses, saying why and naming the override, which lets it build.
func TestReleaseRefusesStaleReliabilityReport(t *testing.T) {
	g := newGateRepo(t)
	rev := g.git("rev-parse", "HEAD")
	g.report(rev, "passed")
	if ran, out := g.release(); !ran {
		t.Fatalf("report at HEAD's code: refused\n%s", out)
	}
	// Changes outside sync/, deltalog/ and catalog/ keep the report current.
	g.write("README.md", "v2\n")
	g.write("cmd/main.go", "v2\n")
	g.commit("docs and cmd")
	if ran, out := g.release(); !ran {
		t.Fatalf("report current for sync/deltalog/catalog, docs changed: refused\n%s", out)
	}

	for _, tc := range []struct {
		name   string
		setup  func(g *gateRepo)
		reason string
	}{
		{"a commit changed sync/", func(g *gateRepo) { g.write("sync/reconcile.go", "v2\n"); g.commit("sync") },
			"HEAD differs from it under sync deltalog catalog"},
		{"a commit added a file to catalog/", func(g *gateRepo) { g.write("catalog/new.go", "v1\n"); g.commit("catalog") },
			"HEAD differs from it under sync deltalog catalog"},
		{"deltalog/ changed, not committed", func(g *gateRepo) { g.write("deltalog/replay.go", "v2\n") },
			"uncommitted changes under sync deltalog catalog"},
		{"no revision recorded", func(g *gateRepo) { g.write("RELIABILITY.md", "# Reliability\n"); g.commit("old report") },
			"records no revision"},
		{"tests failed", func(g *gateRepo) { g.report(g.git("rev-parse", "HEAD"), "failed") },
			"records that its tests did not pass"},
		{"run on uncommitted changes", func(g *gateRepo) { g.report(g.git("rev-parse", "HEAD")+"-dirty", "passed") },
			"was produced from uncommitted changes"},
		{"not a commit", func(g *gateRepo) { g.report(strings.Repeat("ab", 20), "passed") },
			"which is not a commit of this repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateRepo(t)
			g.report(g.git("rev-parse", "HEAD"), "passed")
			tc.setup(g)
			ran, out := g.release()
			if ran || !strings.Contains(out, "release: refused: RELIABILITY.md") || !strings.Contains(out, tc.reason) ||
				!strings.Contains(out, "DELTASYNC_RELEASE_STALE_RELIABILITY=1") {
				t.Fatalf("make release ran %v, want refused saying %q and naming the override:\n%s", ran, tc.reason, out)
			}
			if ran, out := g.release("DELTASYNC_RELEASE_STALE_RELIABILITY=1"); !ran {
				t.Fatalf("with the override: refused\n%s", out)
			}
		})
	}
}
