package deltaspec

import (
	"slices"
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
