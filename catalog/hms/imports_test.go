package hms

import (
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps catalog/hms independent of deltalog and sync: imports
// flow cmd → sync → {deltalog, catalog} only. It imports the neutral model
// (the root catalog package, for catalog.Kind) and internal/, whose
// packages hold facts shared with deltalog and import no deltasync package
// themselves (their tests check); never another kind's package.
func TestImportBoundary(t *testing.T) {
	vs, err := importcheck.Violations(".", importcheck.Module+"internal/")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if strings.HasSuffix(v, " imports "+importcheck.Module+"catalog") {
			continue // the neutral model
		}
		t.Errorf("%s: catalog/hms must import only the root catalog package and internal/", v)
	}
}
