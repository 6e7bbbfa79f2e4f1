package glue

import (
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps catalog/glue independent of deltalog, sync and
// the other kinds: it may import the catalog root (the neutral error
// classes) and internal/ only. Imports flow cmd → sync → {deltalog, catalog}.
func TestImportBoundary(t *testing.T) {
	importcheck.Boundary(t, "catalog/glue", importcheck.Module+"internal/", importcheck.Module+"catalog")
	vs, err := importcheck.Violations(".", importcheck.Module+"internal/")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if !strings.HasSuffix(v, " imports "+importcheck.Module+"catalog") {
			t.Errorf("%s: catalog/glue must not import another kind or package", v)
		}
	}
}
