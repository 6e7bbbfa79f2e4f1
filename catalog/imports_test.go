package catalog

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps catalog independent of deltalog and sync: imports
// flow cmd → sync → {deltalog, catalog} only. internal/ packages hold facts
// shared with deltalog and import no deltasync package themselves (their
// tests check).
func TestImportBoundary(t *testing.T) {
	importcheck.Boundary(t, "catalog", importcheck.Module+"internal/")
}

// TestLinksNoWireClient keeps the root the neutral seam: nothing it links,
// directly or not, speaks HTTP or any catalog kind's protocol. The wire
// clients are the kinds' packages (catalog/uc, catalog/hms).
func TestLinksNoWireClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != importcheck.Module+"catalog" {
		t.Fatalf("go list -deps . does not end with the catalog package: is this the right list?\n%s", out)
	}
	for _, dep := range deps {
		switch {
		case dep == "net/http", strings.HasPrefix(dep, "net/http/"),
			strings.HasPrefix(dep, importcheck.Module+"catalog/"),
			strings.HasPrefix(dep, "github.com/apache/thrift"),
			strings.HasPrefix(dep, "github.com/beltran/gohive"):
			t.Errorf("catalog links %s: the root holds the neutral model only; wire clients live in a kind's package", dep)
		}
	}
}
