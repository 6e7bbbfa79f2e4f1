package kindtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps the contract kind-neutral: it imports sync,
// the catalog root and deltalog (and the standard library), never a
// kind's package (catalog/uc, catalog/hms): a kind is plugged in by its
// Harness alone.
func TestImportBoundary(t *testing.T) {
	importcheck.Boundary(t, "sync/kindtest", importcheck.Module+"sync", importcheck.Module+"deltalog", importcheck.Module+"catalog")
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list found no imports: is this the right package?")
	}
	for _, p := range imports {
		if strings.HasPrefix(p, importcheck.Module+"catalog/") {
			t.Errorf("sync/kindtest imports %s: a kind's package", p)
		}
	}
}
