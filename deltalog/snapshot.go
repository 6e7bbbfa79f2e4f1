package deltalog

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"slices"
	"unique"
)

// Snapshot is the state of a table at one version: what the catalog must
// match. It is immutable once returned by Load or Refresh.
type Snapshot struct {
	Version         int64
	Protocol        Protocol    // log JSON shape (camelCase)
	Metadata        Metadata    // log JSON shape (camelCase)
	Schema          *StructType // parsed Metadata.SchemaString
	CommitTimestamp int64       // ms since epoch, see Table.Load
	// CommitTimestampSource says where CommitTimestamp came from: an
	// in-commit timestamp, commitInfo.timestamp, or a file's modification
	// time, which is no evidence of when the commit was made.
	CommitTimestampSource TimestampSource
	CatalogManaged        bool // protocol has catalogManaged (or catalogOwned-preview)
	// Domains maps domain name to its domainMetadata configuration, for
	// tables whose protocol has the domainMetadata writer feature; nil
	// otherwise. Removed domains are absent.
	Domains map[string]string

	state snapshotState
}

// snapshotState is what Refresh needs besides the public fields.
type snapshotState struct {
	rawProtocol json.RawMessage // protocol action as the log spells it
	rawMetadata json.RawMessage // metaData action as the log spells it
	latestKey   string          // key of the latest version's commit file ("" if checkpoint only, or latestCommit)
	// latestCommit stands for latestKey when that is the plain commit of
	// the snapshot's Version (commitKey(Version)), as Compact keeps it:
	// the key from the listing was a substring of the store's whole key
	// (the table's prefix and all, ~48 bytes per table on S3), kept for
	// as long as the snapshot.
	latestCommit bool
	staged       bool  // latestKey is a catalog-ratified staged commit
	cpVersion    int64 // checkpoint the snapshot was built on, -1 if none
	// latest is what the listing said of latestKey when it was read: how
	// Refresh tells the same log from one rewritten at the same path.
	latest fileStamp
	// compact marks a snapshot returned by Compact.
	compact bool
	// schemaSum is the SHA-256 of the schema string when the snapshot does
	// not hold the string itself (Metadata.SchemaString is ""): a compact
	// snapshot, and what Refresh makes from one while no new metaData
	// comes.
	schemaSum [sha256.Size]byte
	// config holds a compact snapshot's configuration (Metadata.
	// Configuration is nil) as key, value, key, value... sorted by key:
	// a Go map costs ~300 bytes for the two or three properties most
	// tables have, this slice a fifth of that.
	config []string
}

// Compact returns the snapshot as a long-lived cache should keep it: the
// same version, protocol, metaData, domains and commit timestamp (Refresh
// continues from it like from s), without what only a fresh Load's caller
// needs and a cache pays for per table:
//
//   - the schema: Schema is nil and Metadata.SchemaString is "". Only its
//     SHA-256 is kept (SchemaSum), which tells a caller holding a schema
//     string whether it is the log's (SchemaIs) for 32 bytes instead of the
//     string's kilobytes, different for every table of a real fleet. A
//     caller that needs the string itself loads the table again, or keeps
//     it from the start (CompactKeepingSchema). Refresh
//     carries the digest over until a new metaData brings a schema;
//   - the raw protocol and metaData JSON (MarshalJSON then renders both from
//     the parsed fields: the same members and values, in the struct's order,
//     null fields left out, instead of the log's own spelling);
//   - the configuration map: Metadata.Configuration is nil and
//     Configuration returns the same properties (a new map per call);
//   - spare capacity in the protocol's and metaData's lists;
//   - private copies of the strings tables have in common: feature names,
//     partition column names, the format, property names and short
//     property values ("true", "name", "5") are interned too.
//
// A compact snapshot is returned as is. s is not modified.
func (s *Snapshot) Compact() *Snapshot {
	if s == nil || s.state.compact {
		return s
	}
	c := &Snapshot{
		Version:               s.Version,
		Protocol:              s.Protocol,
		Metadata:              s.Metadata,
		CommitTimestamp:       s.CommitTimestamp,
		CommitTimestampSource: s.CommitTimestampSource,
		CatalogManaged:        s.CatalogManaged,
		Domains:               s.Domains,
	}
	c.Protocol.ReaderFeatures = internAll(s.Protocol.ReaderFeatures)
	c.Protocol.WriterFeatures = internAll(s.Protocol.WriterFeatures)
	c.Metadata.PartitionColumns = internAll(s.Metadata.PartitionColumns)
	c.Metadata.Format.Provider = intern(s.Metadata.Format.Provider)
	c.Metadata.Configuration = nil
	c.state = snapshotState{latestKey: s.state.latestKey, latestCommit: s.state.latestCommit, staged: s.state.staged,
		cpVersion: s.state.cpVersion, latest: s.state.latest, compact: true}
	if p := classify(c.state.latestKey); !c.state.staged && p.Kind == kindCommit && p.Version == c.Version {
		c.state.latestKey, c.state.latestCommit = "", true
	}
	c.state.schemaSum = s.SchemaSum()
	c.state.config = compactConfiguration(s.Configuration())
	c.Metadata.SchemaString = ""
	return c
}

// CompactKeepingSchema is Compact for a table whose schema string the
// caller will need again (its catalog spells the schema differently, or is
// not in sync with it): the compact snapshot keeps Metadata.SchemaString.
// A compact snapshot is returned as is.
func (s *Snapshot) CompactKeepingSchema() *Snapshot {
	if s == nil || s.state.compact || s.Metadata.SchemaString == "" {
		return s.Compact()
	}
	c := s.Compact()
	c.Metadata.SchemaString = s.Metadata.SchemaString
	return c
}

// Configuration returns the metaData's configuration: Metadata.
// Configuration, or for a compact snapshot a new map of the same
// properties (never nil).
func (s *Snapshot) Configuration() map[string]string {
	if !s.state.compact {
		return s.Metadata.Configuration
	}
	m := make(map[string]string, len(s.state.config)/2)
	for i := 0; i+1 < len(s.state.config); i += 2 {
		m[s.state.config[i]] = s.state.config[i+1]
	}
	return m
}

// SchemaSum returns the SHA-256 of the metaData's schemaString, also for a
// snapshot that does not hold the string (see Compact).
func (s *Snapshot) SchemaSum() [sha256.Size]byte {
	if s.Metadata.SchemaString == "" {
		return s.state.schemaSum
	}
	return sha256.Sum256([]byte(s.Metadata.SchemaString))
}

// SchemaIs reports whether schemaString is the log's schema string, byte
// for byte (by its digest when the snapshot holds only that).
func (s *Snapshot) SchemaIs(schemaString string) bool {
	if s.Metadata.SchemaString != "" {
		return s.Metadata.SchemaString == schemaString
	}
	return schemaString != "" && sha256.Sum256([]byte(schemaString)) == s.state.schemaSum
}

// MarshalJSON renders the snapshot as
// {"version","protocol","metaData","commitTimestamp","catalogManaged"[,"domains"]},
// with protocol and metaData exactly as the log spells them (actions read
// from checkpoints are rebuilt field by field, null fields left out).
func (s Snapshot) MarshalJSON() ([]byte, error) {
	p, m := s.state.rawProtocol, s.state.rawMetadata
	var err error
	if len(p) == 0 {
		if p, err = json.Marshal(s.Protocol); err != nil {
			return nil, err
		}
	}
	if len(m) == 0 {
		md := s.Metadata
		md.Configuration = s.Configuration()
		if m, err = json.Marshal(md); err != nil {
			return nil, err
		}
	}
	return json.Marshal(struct {
		Version         int64             `json:"version"`
		Protocol        json.RawMessage   `json:"protocol"`
		Metadata        json.RawMessage   `json:"metaData"`
		CommitTimestamp int64             `json:"commitTimestamp"`
		CatalogManaged  bool              `json:"catalogManaged"`
		Domains         map[string]string `json:"domains,omitempty"`
	}{s.Version, p, m, s.CommitTimestamp, s.CatalogManaged, s.Domains})
}

// ClusteringColumns returns the clustering columns from the
// delta.clustering domain (each column a path of field names), or nil
// when the table is not clustered.
func (s *Snapshot) ClusteringColumns() [][]string {
	conf, ok := s.Domains["delta.clustering"]
	if !ok {
		return nil
	}
	var c struct {
		ClusteringColumns [][]string `json:"clusteringColumns"`
	}
	if err := json.Unmarshal([]byte(conf), &c); err != nil || len(c.ClusteringColumns) == 0 {
		return nil
	}
	return c.ClusteringColumns
}

// intern returns the one shared copy of v.
func intern(v string) string { return unique.Make(v).Value() }

// internAll returns a copy of vs without spare capacity, its strings
// interned; nil for an empty vs that is nil.
func internAll(vs []string) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = intern(v)
	}
	return out
}

// internedValueMax bounds the property values Compact interns: short values
// repeat across tables (flags, modes, counts); long ones are mostly one
// table's own, and interning those would only add the interning map's entry.
const internedValueMax = 16

// compactConfiguration returns conf as key, value pairs sorted by key, the
// keys and the values of up to internedValueMax bytes interned; nil if conf
// is empty.
func compactConfiguration(conf map[string]string) []string {
	if len(conf) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(conf))
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		v := conf[k]
		if len(v) <= internedValueMax {
			v = intern(v)
		}
		out = append(out, intern(k), v)
	}
	return out
}
