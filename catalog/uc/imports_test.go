package uc

import (
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps the Unity Catalog kind beside the other kinds:
// it imports the neutral model (the root catalog package) and internal/,
// and neither deltalog, sync nor another kind's package.
func TestImportBoundary(t *testing.T) {
	vs, err := importcheck.Violations(".", importcheck.Module+"internal/")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if strings.HasSuffix(v, " imports "+importcheck.Module+"catalog") {
			continue // the neutral model
		}
		t.Errorf("%s: catalog/uc must import only the root catalog package and internal/", v)
	}
}
