package deltalog

import (
	"encoding/json"
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
