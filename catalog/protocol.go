package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/internal/deltaspec"
)

// Server-derived property keys (see IsDerivedProperty).
const (
	PropMinReaderVersion     = "delta.minReaderVersion"
	PropMinWriterVersion     = "delta.minWriterVersion"
	PropFeaturePrefix        = "delta.feature."
	PropClusteringColumns    = "clusteringColumns"       // what the OSS server stores
	PropDeltaClusteringCols  = "delta.clusteringColumns" // what the spec names
	PropRowIDHighWaterMark   = "delta.rowTracking.rowIdHighWaterMark"
	PropLastUpdateVersion    = "delta.lastUpdateVersion"
	PropLastCommitTimestamp  = "delta.lastCommitTimestamp"
	featureSupported         = "supported"
	readerFeaturesMinVersion = 3
	writerFeaturesMinVersion = 7
)

// IsDerivedProperty reports whether key is owned by the server (projected
// from the protocol, domain metadata or sync bookkeeping). Such keys never
// go into the Delta log and are never sent in set/remove-properties.
func IsDerivedProperty(key string) bool {
	switch key {
	case PropMinReaderVersion, PropMinWriterVersion, PropClusteringColumns, PropDeltaClusteringCols,
		PropRowIDHighWaterMark, PropLastUpdateVersion, PropLastCommitTimestamp:
		return true
	}
	return strings.HasPrefix(key, PropFeaturePrefix)
}

// IsReaderWriterFeature reports whether a table feature is a reader+writer
// feature (listed in both readerFeatures and writerFeatures); every other
// feature is treated as writer-only. The list is shared with deltalog
// (internal/deltaspec).
func IsReaderWriterFeature(f string) bool { return deltaspec.IsReaderWriterFeature(f) }

// ProtocolProperties projects p the way the server stores it:
// delta.minReaderVersion, delta.minWriterVersion and
// delta.feature.<f>=supported for every feature in reader ∪ writer.
func ProtocolProperties(p Protocol) map[string]string {
	out := map[string]string{
		PropMinReaderVersion: strconv.Itoa(p.MinReaderVersion),
		PropMinWriterVersion: strconv.Itoa(p.MinWriterVersion),
	}
	for _, f := range p.ReaderFeatures {
		out[PropFeaturePrefix+f] = featureSupported
	}
	for _, f := range p.WriterFeatures {
		out[PropFeaturePrefix+f] = featureSupported
	}
	return out
}

// ProtocolFromProperties rebuilds a protocol from the server's projection.
// Reader features (only when minReaderVersion is 3) are the reader+writer
// features present; writer features (only when minWriterVersion is 7) are
// all features present. Features come back sorted; nil when there are none.
// Missing or non-numeric version keys are an error.
func ProtocolFromProperties(props map[string]string) (Protocol, error) {
	var p Protocol
	var err error
	if p.MinReaderVersion, err = intProp(props, PropMinReaderVersion); err != nil {
		return Protocol{}, err
	}
	if p.MinWriterVersion, err = intProp(props, PropMinWriterVersion); err != nil {
		return Protocol{}, err
	}
	var feats []string
	for k, v := range props {
		if f, ok := strings.CutPrefix(k, PropFeaturePrefix); ok && f != "" && strings.EqualFold(v, featureSupported) {
			feats = append(feats, f)
		}
	}
	slices.Sort(feats)
	for _, f := range feats {
		if p.MinReaderVersion == readerFeaturesMinVersion && IsReaderWriterFeature(f) {
			p.ReaderFeatures = append(p.ReaderFeatures, f)
		}
		if p.MinWriterVersion == writerFeaturesMinVersion {
			p.WriterFeatures = append(p.WriterFeatures, f)
		}
	}
	return p, nil
}

func intProp(props map[string]string, key string) (int, error) {
	v, ok := props[key]
	if !ok {
		return 0, fmt.Errorf("catalog: property %s is missing", key)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("catalog: property %s=%q is not a version number", key, v)
	}
	return n, nil
}

// DomainMetadataFromProperties reads the server's projection of the
// delta.clustering domain (property clusteringColumns, or the spec's
// delta.clusteringColumns) and the delta.rowTracking domain
// (delta.rowTracking.rowIdHighWaterMark). Absent domains stay nil.
func DomainMetadataFromProperties(props map[string]string) (DomainMetadata, error) {
	var d DomainMetadata
	cols, ok, err := ClusteringFromProperties(props)
	if err != nil {
		return DomainMetadata{}, err
	}
	if ok {
		if cols == nil {
			cols = [][]string{}
		}
		d.Clustering = &cols
	}
	if raw, ok := props[PropRowIDHighWaterMark]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return DomainMetadata{}, fmt.Errorf("catalog: property %s=%q is not an integer", PropRowIDHighWaterMark, raw)
		}
		d.RowIDHighWaterMark = &n
	}
	return d, nil
}

// ClusteringFromProperties reads the server's projection of the
// delta.clustering domain: the column paths stored as property
// clusteringColumns (what the OSS server writes) or the spec's
// delta.clusteringColumns. ok is false when neither key is present (the
// table is not clustered); a JSON null gives nil paths with ok set.
func ClusteringFromProperties(props map[string]string) (cols [][]string, ok bool, err error) {
	for _, key := range []string{PropClusteringColumns, PropDeltaClusteringCols} {
		raw, found := props[key]
		if !found {
			continue
		}
		if err := json.Unmarshal([]byte(raw), &cols); err != nil {
			return nil, false, fmt.Errorf("catalog: property %s=%q: not a JSON list of column paths", key, raw)
		}
		return cols, true, nil
	}
	return nil, false, nil
}

// Protocol is a Delta table's protocol; its JSON is the Delta API's
// DeltaProtocol (kebab-case).
type Protocol struct {
	MinReaderVersion int      `json:"min-reader-version"`
	MinWriterVersion int      `json:"min-writer-version"`
	ReaderFeatures   []string `json:"reader-features,omitempty"`
	WriterFeatures   []string `json:"writer-features,omitempty"`
}
