package deltaspec

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestReaderWriterFeatures(t *testing.T) {
	if !slices.IsSorted(readerWriterFeatures) {
		t.Fatalf("not sorted (IsReaderWriterFeature searches it): %v", readerWriterFeatures)
	}
	for _, f := range []string{"variantShredding", "variantShredding-preview", "deletionVectors", "columnMapping", "catalogManaged"} {
		if !IsReaderWriterFeature(f) {
			t.Errorf("%s is a reader+writer feature", f)
		}
	}
	// Writer-only features, and the old preview name deltalog refuses.
	for _, f := range []string{"appendOnly", "invariants", "inCommitTimestamp", "rowTracking", "domainMetadata", "catalogOwned", ""} {
		if IsReaderWriterFeature(f) {
			t.Errorf("%s is not a reader+writer feature", f)
		}
	}
	got := ReaderWriterFeatures()
	got[0] = "changed"
	if readerWriterFeatures[0] == "changed" {
		t.Error("ReaderWriterFeatures returns the package's slice")
	}
}

// TestImportsNothingOfDeltasync: deltalog and catalog both import this
// package, so it must not become a path between them.
func TestImportsNothingOfDeltasync(t *testing.T) {
	files, _ := filepath.Glob("*.go")
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
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/deltasync/deltasync/") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
