package deltalog

import (
	"slices"

	"github.com/deltasync/deltasync/internal/deltaspec"
)

// maxReaderVersion is the highest protocol reader version deltalog reads.
const maxReaderVersion = 3

// checkReadable returns an error wrapping ErrUnsupportedFeature when p
// asks for a reader version or a reader feature deltalog does not know.
func checkReadable(p *Protocol) error {
	if p.MinReaderVersion > maxReaderVersion {
		return reason(ErrUnsupportedFeature, "unsupported reader version %d (deltalog reads up to %d)", p.MinReaderVersion, maxReaderVersion)
	}
	if p.MinReaderVersion < 1 {
		return reason(ErrUnsupportedFeature, "invalid reader version %d", p.MinReaderVersion)
	}
	if p.MinReaderVersion < 3 {
		return nil // reader features only exist with reader version 3
	}
	// The reader features deltalog reads the metadata of are the
	// protocol's reader+writer features (internal/deltaspec, shared with
	// catalog). Anything else (including the old preview name
	// "catalogOwned") is refused: a reader must not guess at a feature.
	for _, f := range p.ReaderFeatures {
		if !deltaspec.IsReaderWriterFeature(f) {
			return reason(ErrUnsupportedFeature, "unsupported reader feature %q", f)
		}
	}
	return nil
}

// hasWriterFeature reports whether p lists feature among its writer features.
func (p *Protocol) hasWriterFeature(feature string) bool {
	return p != nil && slices.Contains(p.WriterFeatures, feature)
}

// catalogManaged reports whether p has the catalogManaged feature (or its
// preview name catalogOwned-preview).
func (p *Protocol) catalogManaged() bool {
	if p == nil {
		return false
	}
	for _, f := range [][]string{p.ReaderFeatures, p.WriterFeatures} {
		if slices.Contains(f, "catalogManaged") || slices.Contains(f, "catalogOwned-preview") {
			return true
		}
	}
	return false
}
