// Package deltaspec holds facts of the Delta protocol that both deltalog
// (reading logs) and catalog (the server's property projection of a
// protocol) need. deltalog and catalog never import each other, so the
// facts they share live here, once. It imports nothing from deltasync.
package deltaspec

import "slices"

// readerWriterFeatures are the table features of the Delta protocol that
// are reader+writer features (listed in both readerFeatures and
// writerFeatures), sorted, preview names included. Every other feature is
// writer-only. deltalog reads the metadata of tables using any of them;
// a reader feature not listed here is refused (a reader must not guess).
var readerWriterFeatures = []string{
	"catalogManaged",
	"catalogOwned-preview",
	"columnMapping",
	"deletionVectors",
	"timestampNtz",
	"typeWidening",
	"typeWidening-preview",
	"v2Checkpoint",
	"vacuumProtocolCheck",
	"variantShredding",
	"variantShredding-preview",
	"variantType",
	"variantType-preview",
}

// IsReaderWriterFeature reports whether f is a reader+writer table feature.
func IsReaderWriterFeature(f string) bool {
	_, ok := slices.BinarySearch(readerWriterFeatures, f)
	return ok
}

// ReaderWriterFeatures returns the reader+writer table features, sorted.
func ReaderWriterFeatures() []string { return slices.Clone(readerWriterFeatures) }
