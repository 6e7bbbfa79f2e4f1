package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/location"
)

// DiffOptions tunes the comparison.
type DiffOptions struct {
	// IgnoreProperties are keys (path.Match globs) never compared or synced.
	IgnoreProperties []string
	// IgnoreFieldMetadata are field-metadata keys (path.Match globs) left
	// out of the schema comparison, in addition to
	// DefaultIgnoreFieldMetadata. A schema update still sends them as the
	// log has them.
	IgnoreFieldMetadata []string
}

// Plan is the typed difference between a table's log and its catalog
// record, field by field. A nil field means "no difference". It is the
// result of Diff; Updates turns it into the updateTable actions that fix it.
type Plan struct {
	Table        string              `json:"table"`
	Schema       *SchemaChange       `json:"schema,omitempty"`
	Partitioning *PartitioningChange `json:"partitioning,omitempty"`
	Clustering   *ClusteringChange   `json:"clustering,omitempty"`
	Protocol     *ProtocolChange     `json:"protocol,omitempty"`
	Properties   *PropertiesChange   `json:"properties,omitempty"`
	Comment      *ValueChange        `json:"comment,omitempty"`
	Location     *ValueChange        `json:"location,omitempty"`
	Version      *VersionChange      `json:"version,omitempty"`
	// Uniform is read-only drift of the UniForm Iceberg pointer: reported,
	// never written, and left out of MetadataDrift and Empty.
	Uniform *UniformDrift `json:"uniform,omitempty"`
	// Unsupported lists log types the catalog cannot store ("path: type");
	// such a table is flagged, never synced.
	Unsupported []string `json:"unsupported,omitempty"`
	// Problems are comparisons that could not be made (e.g. an unparseable
	// schemaString); the table's status is then Unknown.
	Problems []string `json:"problems,omitempty"`
}

// SchemaChange says the catalog's columns differ from the log's schema.
type SchemaChange struct {
	Log     catalog.StructType `json:"-"`
	Catalog catalog.StructType `json:"-"`
	// Details are human-readable per-column differences.
	Details []string `json:"details"`
	// IgnoredFieldMetadata are the globs of DiffOptions.IgnoreFieldMetadata
	// the comparison left out (DefaultIgnoreFieldMetadata besides them);
	// Changes leaves them out too.
	IgnoredFieldMetadata []string `json:"-"`
}

// PartitioningChange says the partition columns differ.
type PartitioningChange struct {
	Log     []string `json:"log"`
	Catalog []string `json:"catalog"`
}

// ClusteringChange says the clustering columns differ (nil = not clustered).
type ClusteringChange struct {
	Log     [][]string `json:"log"`
	Catalog [][]string `json:"catalog"`
}

// ProtocolChange says protocol versions or the set of features differ.
type ProtocolChange struct {
	Log     catalog.Protocol  `json:"log"`
	Catalog *catalog.Protocol `json:"catalog"` // nil when the catalog holds no readable protocol
}

// PropertiesChange says configuration keys to set (changed or added in the log)
// and to remove (gone from the log). Derived and ignored keys never appear.
type PropertiesChange struct {
	Set    map[string]string `json:"set,omitempty"`
	Remove []string          `json:"remove,omitempty"`
	// Catalog holds the catalog's values of the keys in Set, where present,
	// and of the keys in Remove: what the record held before.
	Catalog map[string]string `json:"catalog,omitempty"`
}

// ValueChange says a single string differs.
type ValueChange struct {
	Log     string `json:"log"`
	Catalog string `json:"catalog"`
}

// VersionChange says the catalog's watermark (delta.lastUpdateVersion) is not
// the log version.
type VersionChange struct {
	Log            int64  `json:"log"`
	LogTimestampMs int64  `json:"log_timestamp_ms"`
	Catalog        *int64 `json:"catalog"`
	// Recreated says why a log behind the catalog's watermark is synced
	// all the same: it is another table (see LogState.Recreated).
	Recreated string `json:"recreated,omitempty"`
}

// Kinds lists the kinds of difference in a fixed order.
func (p Plan) Kinds() []DriftKind {
	var k []DriftKind
	add := func(ok bool, kind DriftKind) {
		if ok {
			k = append(k, kind)
		}
	}
	add(p.Schema != nil, KindSchema)
	add(p.Partitioning != nil, KindPartitioning)
	add(p.Clustering != nil, KindClustering)
	add(p.Protocol != nil, KindProtocol)
	add(p.Properties != nil, KindProperties)
	add(p.Comment != nil, KindComment)
	add(p.Location != nil, KindLocation)
	add(p.Version != nil, KindVersion)
	add(p.Uniform != nil, KindUniform)
	return k
}

// MetadataDrift reports whether anything but the version watermark differs.
func (p Plan) MetadataDrift() bool {
	return p.Schema != nil || p.Partitioning != nil || p.Clustering != nil || p.Protocol != nil ||
		p.Properties != nil || p.Comment != nil || p.Location != nil
}

// Empty reports whether log and catalog agree completely.
func (p Plan) Empty() bool {
	return !p.MetadataDrift() && p.Version == nil && len(p.Unsupported) == 0 && len(p.Problems) == 0
}

// Diff compares a table's log with its catalog record. It is pure and
// deterministic: server-derived keys and representation differences the
// server introduces (kebab vs camel schema JSON, reader/writer feature
// merging, location spelling, absent vs empty comment) are normalised away
// first, so a faithfully registered table always yields an empty Plan.
func Diff(log LogState, rec Record, opts DiffOptions) Plan {
	p := Plan{Table: rec.Name.String()}
	p.Schema, p.Unsupported, p.Problems = diffSchema(&log, &rec, ignoredFieldMetadata(opts.IgnoreFieldMetadata))
	if p.Schema != nil {
		p.Schema.IgnoredFieldMetadata = opts.IgnoreFieldMetadata
	}
	if !slices.Equal(nonNil(log.PartitionColumns), nonNil(rec.PartitionColumns)) {
		p.Partitioning = &PartitioningChange{Log: nonNil(log.PartitionColumns), Catalog: nonNil(rec.PartitionColumns)}
	}
	if rec.ClusteringProblem != "" {
		p.Problems = append(p.Problems, rec.ClusteringProblem)
	} else if !equalClustering(log.Clustering, rec.Clustering) {
		p.Clustering = &ClusteringChange{Log: log.Clustering, Catalog: rec.Clustering}
	}
	p.Protocol = diffProtocol(log.Protocol, rec.Protocol)
	p.Properties = diffProperties(log.Configuration, rec.Properties, opts.IgnoreProperties)
	if log.Description != rec.Comment {
		p.Comment = &ValueChange{Log: log.Description, Catalog: rec.Comment}
	}
	if log.Location != "" && location.Normalize(log.Location) != location.Normalize(rec.Location) {
		p.Location = &ValueChange{Log: log.Location, Catalog: rec.Location}
	} else if rec.StorageLocation != "" && location.Normalize(rec.StorageLocation) != location.Normalize(rec.Location) {
		p.Location = &ValueChange{Log: rec.Location, Catalog: rec.StorageLocation}
	}
	p.Uniform = diffUniform(&log, &rec)
	if !rec.Managed() && (rec.LastCommitVersion == nil || *rec.LastCommitVersion != log.Version) {
		p.Version = &VersionChange{Log: log.Version, LogTimestampMs: log.CommitTimestamp, Catalog: rec.LastCommitVersion, Recreated: log.Recreated}
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// diffSchema compares the log's schemaString with the catalog's columns in
// the catalog model: names, types (nested), nullability and field metadata
// (column-mapping ids and physical names, comments, ...), exactly, but for
// the ignored field-metadata keys (table state, see
// DefaultIgnoreFieldMetadata).
func diffSchema(log *LogState, rec *Record, ignored fieldMetadataIgnored) (*SchemaChange, []string, []string) {
	cat := rec.Columns
	// The usual case, a table in sync: the catalog's columns written in the
	// log's form are the log's schemaString byte for byte (Spark and
	// delta-rs write the same compact form; a writer that orders field
	// metadata differently takes the parse below). Then the log's schema
	// is the catalog's and is not parsed at all: writing ~40 columns costs
	// a fraction of decoding them.
	if log.SchemaIsCatalogs(rec) {
		return nil, catalog.UnsupportedTypes(cat), nil
	}
	if log.SchemaElided() {
		// The Reconciler reads the log again before diffing in this case
		// (sync.Reconciler); a caller that did not gets a problem, not a
		// guess.
		return nil, nil, []string{"log schema: only its digest is at hand and the catalog's columns are not it; read the log again"}
	}
	want, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		return nil, nil, []string{fmt.Sprintf("log schemaString: %v", err)}
	}
	unsupported := catalog.UnsupportedTypes(want)
	sw, sc := ignored.strip(&want), ignored.strip(&cat)
	if equalStruct(sw, sc) {
		return nil, unsupported, nil
	}
	return &SchemaChange{Log: want, Catalog: cat, Details: schemaDetails(want, cat, *sw, *sc)}, unsupported, nil
}

func equalStruct(a, b *catalog.StructType) bool {
	if len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		fa, fb := &a.Fields[i], &b.Fields[i]
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !equalType(&fa.Type, &fb.Type) ||
			!equalMetadata(fa.Metadata, fb.Metadata) {
			return false
		}
	}
	return true
}

func equalType(a, b *catalog.DataType) bool {
	switch {
	case a.Struct != nil || b.Struct != nil:
		return a.Struct != nil && b.Struct != nil && equalStruct(a.Struct, b.Struct)
	case a.Array != nil || b.Array != nil:
		return a.Array != nil && b.Array != nil && a.Array.ContainsNull == b.Array.ContainsNull &&
			equalType(&a.Array.ElementType, &b.Array.ElementType)
	case a.Map != nil || b.Map != nil:
		return a.Map != nil && b.Map != nil && a.Map.ValueContainsNull == b.Map.ValueContainsNull &&
			equalType(&a.Map.KeyType, &b.Map.KeyType) && equalType(&a.Map.ValueType, &b.Map.ValueType)
	case len(a.Other) > 0 || len(b.Other) > 0:
		return canonicalJSON(a.Other) == canonicalJSON(b.Other)
	}
	return normalizeDecimal(a.Primitive) == normalizeDecimal(b.Primitive)
}

// normalizeDecimal spells "decimal(10, 2)" as "decimal(10,2)" (the server
// accepts both and writes the latter).
func normalizeDecimal(s string) string {
	if strings.HasPrefix(s, "decimal(") {
		return strings.ReplaceAll(s, " ", "")
	}
	return s
}

// equalMetadata compares field metadata values (decoded JSON, numbers as
// json.Number); nil and empty are equal.
func equalMetadata(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !reflect.DeepEqual(va, vb) && canonicalAny(va) != canonicalAny(vb) {
			return false
		}
	}
	return true
}

func canonicalJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return canonicalAny(v)
}

// canonicalAny renders a decoded JSON value with sorted keys.
func canonicalAny(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// schemaDetails describes top-level column differences for people: the
// columnChanges Plan.Changes lists (the same matching by identity), one
// line each.
func schemaDetails(log, cat, logCmp, catCmp catalog.StructType) []string {
	var out []string
	for _, c := range columnChanges(log, cat, logCmp, catCmp) {
		switch c.op {
		case OpAdd:
			out = append(out, fmt.Sprintf("add column %q", c.name))
		case OpRemove:
			out = append(out, fmt.Sprintf("drop column %q", c.name))
		case OpRename:
			out = append(out, fmt.Sprintf("rename column %q", c.name))
		case OpMove:
			out = append(out, fmt.Sprintf("move column %q to position %s", c.name, c.log))
		default:
			out = append(out, fmt.Sprintf("change column %q", c.name))
		}
	}
	if len(out) == 0 {
		out = append(out, "column encoding differs")
	}
	return out
}

func equalClustering(a, b [][]string) bool {
	if len(a) != len(b) {
		return false // nil and [] are both "not clustered": len 0 == len 0
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// diffProtocol compares versions and the SET of features: the server keeps
// only reader ∪ writer as delta.feature.* keys. cat is nil when the
// catalog holds no readable protocol.
func diffProtocol(want catalog.Protocol, cat *catalog.Protocol) *ProtocolChange {
	if cat == nil {
		return &ProtocolChange{Log: want}
	}
	if cat.MinReaderVersion == want.MinReaderVersion && cat.MinWriterVersion == want.MinWriterVersion &&
		slices.Equal(featureSet(want), featureSet(*cat)) {
		return nil
	}
	c := *cat
	return &ProtocolChange{Log: want, Catalog: &c}
}

func featureSet(p catalog.Protocol) []string {
	var all []string
	all = append(all, p.ReaderFeatures...)
	all = append(all, p.WriterFeatures...)
	sort.Strings(all)
	return slices.Compact(all)
}

// ignoredProperty reports keys never compared: server-derived keys and the
// user's ignore globs.
func ignoredProperty(key string, ignore []string) bool {
	return catalog.IsDerivedProperty(key) || catalog.IgnoredProperty(key, ignore)
}

func diffProperties(log, cat map[string]string, ignore []string) *PropertiesChange {
	ch := &PropertiesChange{}
	for k, v := range log {
		if ignoredProperty(k, ignore) {
			continue
		}
		if cv, ok := cat[k]; !ok || cv != v {
			if ch.Set == nil {
				ch.Set = map[string]string{}
			}
			ch.Set[k] = v
			if ok {
				if ch.Catalog == nil {
					ch.Catalog = map[string]string{}
				}
				ch.Catalog[k] = cv
			}
		}
	}
	for k, cv := range cat {
		if _, ok := log[k]; !ok && !ignoredProperty(k, ignore) {
			ch.Remove = append(ch.Remove, k)
			if ch.Catalog == nil {
				ch.Catalog = map[string]string{}
			}
			ch.Catalog[k] = cv
		}
	}
	sort.Strings(ch.Remove)
	if ch.Set == nil && ch.Remove == nil {
		return nil
	}
	return ch
}
