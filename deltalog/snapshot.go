package deltalog

import (
	"encoding/json"
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
	CatalogManaged  bool        // protocol has catalogManaged (or catalogOwned-preview)
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
	latestKey   string          // key of the latest version's commit file ("" if checkpoint only)
	staged      bool            // latestKey is a catalog-ratified staged commit
	cpVersion   int64           // checkpoint the snapshot was built on, -1 if none
	// compact marks a snapshot returned by Compact; schema is then the
	// handle of its interned Metadata.SchemaString, which keeps the one
	// shared copy alive while any compact snapshot uses it.
	compact bool
	schema  unique.Handle[string]
}

// Compact returns the snapshot as a long-lived cache should keep it: the
// same version, protocol, metaData, domains and commit timestamp (Refresh
// continues from it like from s), without what only a fresh Load's caller
// needs and a cache pays for per table:
//
//   - the parsed schema tree (Schema is nil; Metadata.SchemaString is kept,
//     and Refresh parses a new snapshot's tree whenever the table advances);
//   - the raw protocol and metaData JSON (MarshalJSON then renders both from
//     the parsed fields: the same members and values, in the struct's order,
//     null fields left out, instead of the log's own spelling);
//   - private copies of the schema string: it is interned (unique.Make), so
//     every compact snapshot of tables with one schema shares one string;
//   - spare capacity in the protocol's and metaData's lists.
//
// A compact snapshot is returned as is. s is not modified.
func (s *Snapshot) Compact() *Snapshot {
	if s == nil || s.state.compact {
		return s
	}
	c := &Snapshot{
		Version:         s.Version,
		Protocol:        s.Protocol,
		Metadata:        s.Metadata,
		CommitTimestamp: s.CommitTimestamp,
		CatalogManaged:  s.CatalogManaged,
		Domains:         s.Domains,
	}
	c.Protocol.ReaderFeatures = slices.Clip(slices.Clone(s.Protocol.ReaderFeatures))
	c.Protocol.WriterFeatures = slices.Clip(slices.Clone(s.Protocol.WriterFeatures))
	c.Metadata.PartitionColumns = slices.Clip(slices.Clone(s.Metadata.PartitionColumns))
	c.state = snapshotState{latestKey: s.state.latestKey, staged: s.state.staged, cpVersion: s.state.cpVersion, compact: true}
	c.state.schema = unique.Make(s.Metadata.SchemaString)
	c.Metadata.SchemaString = c.state.schema.Value()
	return c
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
		if m, err = json.Marshal(s.Metadata); err != nil {
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
