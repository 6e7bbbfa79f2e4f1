package plan

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestPure keeps the plan pure: it links only the neutral model (the
// catalog root and the facts it shares from internal/), the location
// spelling rules of sync/location, and the standard library without
// net/http. No catalog kind's client, no storage, no network: a plan is a
// function of the two sides read.
func TestPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != importcheck.Module+"sync/plan" {
		t.Fatalf("go list -deps . does not end with sync/plan: is this the right list?\n%s", out)
	}
	allowed := func(dep string) bool {
		switch {
		case dep == importcheck.Module+"catalog", dep == importcheck.Module+"sync/location",
			dep == importcheck.Module+"sync/plan", strings.HasPrefix(dep, importcheck.Module+"internal/"):
			return true
		}
		return false
	}
	for _, dep := range deps {
		if !allowed(dep) {
			t.Errorf("sync/plan links %s: the plan imports only the neutral model and the standard library", dep)
		}
	}
	std, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, std)
	}
	for _, dep := range strings.Fields(string(std)) {
		if dep == "net/http" || dep == "net" || strings.HasPrefix(dep, "net/http/") {
			t.Errorf("sync/plan links %s: a plan sends nothing", dep)
		}
	}
}
