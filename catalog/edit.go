package catalog

// Edit is what one write changes of a table's record to make it the log's:
// each non-nil field is an aspect that differs, holding the log's value,
// and the watermark (Version, CommitTimestampMs) is always sent with it.
// It is what a plan asks of any kind of catalog; each kind turns it into
// its own request (Unity Catalog: updateTable actions; the Hive
// Metastore and Glue: the record with deltasync's keys set).
type Edit struct {
	// Columns is the log's schema.
	Columns *StructType `json:"columns,omitempty"`
	// PartitionColumns is the log's partition columns (empty, not nil, for
	// none).
	PartitionColumns []string `json:"partition_columns,omitempty"`
	SetPartitioning  bool     `json:"set_partitioning,omitempty"`
	// Protocol is the log's protocol.
	Protocol *Protocol `json:"protocol,omitempty"`
	// SetProperties and RemoveProperties are the properties to set (changed
	// or added in the log) and to remove (gone from it).
	SetProperties    map[string]string `json:"set_properties,omitempty"`
	RemoveProperties []string          `json:"remove_properties,omitempty"`
	// Clustering is the log's clustering columns when SetClustering is
	// set; nil then removes the clustering.
	Clustering    [][]string `json:"clustering,omitempty"`
	SetClustering bool       `json:"set_clustering,omitempty"`
	// Renames are the top-level columns the plan classified as renamed
	// (matched by their column-mapping identity): the record's name →
	// the log's. A kind that takes one rename per request (Unity Catalog's
	// set-columns guards) sends them in steps.
	Renames map[string]string `json:"renames,omitempty"`
	// Comment is the log's description.
	Comment *string `json:"comment,omitempty"`
	// Version and CommitTimestampMs are the log version the record is made
	// true to, and its commit time: the record's watermark.
	Version           int64 `json:"version"`
	CommitTimestampMs int64 `json:"commit_timestamp_ms"`
}

// The names of what an Edit changes, as reports, plans and the audit trail
// show them: the Delta API's action names, whichever kind is written.
const (
	ActionSetColumns            = "set-columns"
	ActionSetPartitionColumns   = "set-partition-columns"
	ActionSetProtocol           = "set-protocol"
	ActionSetProperties         = "set-properties"
	ActionRemoveProperties      = "remove-properties"
	ActionSetDomainMetadata     = "set-domain-metadata"
	ActionRemoveDomainMetadata  = "remove-domain-metadata"
	ActionSetTableComment       = "set-table-comment"
	ActionUpdateSnapshotVersion = "update-metadata-snapshot-version"
)

// Actions names what e changes, in the order a write applies it; the
// watermark's action is last. A nil Edit changes nothing.
func (e *Edit) Actions() []string {
	if e == nil {
		return nil
	}
	var a []string
	if e.Columns != nil {
		a = append(a, ActionSetColumns)
	}
	if e.SetPartitioning {
		a = append(a, ActionSetPartitionColumns)
	}
	if e.Protocol != nil {
		a = append(a, ActionSetProtocol)
	}
	if len(e.SetProperties) > 0 {
		a = append(a, ActionSetProperties)
	}
	if len(e.RemoveProperties) > 0 {
		a = append(a, ActionRemoveProperties)
	}
	if e.SetClustering {
		if len(e.Clustering) > 0 {
			a = append(a, ActionSetDomainMetadata)
		} else {
			a = append(a, ActionRemoveDomainMetadata)
		}
	}
	if e.Comment != nil {
		a = append(a, ActionSetTableComment)
	}
	return append(a, ActionUpdateSnapshotVersion)
}
