package hms

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundary keeps catalog/hms independent of deltalog and sync: imports
// flow cmd → sync → {deltalog, catalog} only.
func TestImportBoundary(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			// internal/ packages hold facts shared with deltalog and
			// import no deltasync package themselves (their tests check).
			if strings.HasPrefix(p, "github.com/deltasync/deltasync/") && !strings.HasPrefix(p, "github.com/deltasync/deltasync/internal/") {
				t.Errorf("%s imports %s: catalog/hms must not import other deltasync packages", f, p)
			}
		}
	}
}
