package catalog

import "strings"

// TableTypeManaged and TableTypeExternal are the table types every kind
// reports its records as (Hive's MANAGED_TABLE / EXTERNAL_TABLE included).
const (
	TableTypeManaged  = "MANAGED"
	TableTypeExternal = "EXTERNAL"
)

// Record is what a catalog records for a table, as far as a reconcile
// compares or decides from it: the live side of Diff. It is no catalog's
// wire type: each kind builds it from its own answers in one place.
type Record struct {
	Name TableName
	// ID is the catalog's id of the table (Unity Catalog's table UUID);
	// an update asserts it.
	ID string
	// Type is the catalog's table type (EXTERNAL, MANAGED, ...).
	Type string
	// CatalogManaged is set when the record carries the catalogManaged
	// feature: the catalog ratifies the table's commits.
	CatalogManaged bool
	// Location is where the catalog says the table is.
	Location string
	// StorageLocation is a second spelling of it the catalog keeps (Unity
	// Catalog's classic storage_location), "" if unknown.
	StorageLocation string
	// Columns are the catalog's columns in the Delta schema model.
	Columns          StructType
	PartitionColumns []string
	// Clustering is the clustering column paths; nil when not clustered.
	// ClusteringProblem says why the catalog's clustering could not be
	// read ("" when it could).
	Clustering        [][]string
	ClusteringProblem string
	// Protocol is the catalog's record of the log's protocol; nil when it
	// holds none that can be read.
	Protocol *Protocol
	// Properties are the table's properties as the catalog holds them,
	// server-derived keys included (Diff leaves those out).
	Properties map[string]string
	// Comment is the table's comment ("" for none).
	Comment string
	// LastCommitVersion and LastCommitTimestampMs are the catalog's
	// watermark: the log version (and its commit time) it was last told.
	LastCommitVersion     *int64
	LastCommitTimestampMs *int64
	// LatestTableVersion is, for a table whose commits the catalog
	// ratifies, the latest version it ratified; Commits are the ratified
	// commits not yet published in the log.
	LatestTableVersion *int64
	Commits            []Commit
	// Etag is the record's version, which an update asserts; UpdatedTime
	// is when it last changed (ms).
	Etag        string
	UpdatedTime int64
	// Iceberg is the catalog's UniForm Iceberg pointer, nil for none.
	Iceberg *IcebergPointer
	// columnsText caches ColumnsAsLog; a pointer, so that the copies of a
	// Record made once it is set share it.
	columnsText *columnsText
}

// Commit is a commit the catalog ratified: its version and the file that
// holds it.
type Commit struct {
	Version  int64
	FileName string
}

// IcebergPointer is where the catalog's UniForm Iceberg metadata is and
// the Delta version it was converted at (nil when unknown).
type IcebergPointer struct {
	MetadataLocation string
	ConvertedVersion *int64
}

type columnsText struct {
	s   string
	err error
}

// ColumnsAsLog returns the catalog's columns written in the log's form
// (StructType.SchemaString): what a full reconcile compares with
// the log's schema up to three times (which snapshot to keep, whether a
// digest-only snapshot must be read again, the diff), rendered once.
func (r *Record) ColumnsAsLog() (string, error) {
	if r.columnsText == nil {
		s, err := r.Columns.SchemaString()
		r.columnsText = &columnsText{s: s, err: err}
	}
	return r.columnsText.s, r.columnsText.err
}

// Managed reports whether the catalog owns the table (MANAGED or
// catalog-managed): such tables are watch-only.
func (r *Record) Managed() bool {
	return strings.EqualFold(r.Type, TableTypeManaged) || r.CatalogManaged
}

// SetFromParameters fills what a record kept as a parameter map (the Hive
// Metastore's, Glue's) says of the log: the columns of its stored Delta
// schema string when it has one (an unreadable one leaves them empty,
// drift the log's schema replaces), the protocol and clustering its
// properties hold (a clustering it cannot read is ClusteringProblem), and
// the watermark, version and commit timestamp (negative: absent).
func (r *Record) SetFromParameters(schema string, hasSchema bool, properties map[string]string, version, commitTimestamp int64) {
	if hasSchema {
		if cols, err := ColumnsFromSchemaString(schema); err == nil {
			r.Columns = cols
		}
	}
	if p, err := ProtocolFromProperties(properties); err == nil {
		r.Protocol = &p
	}
	if cols, _, err := ClusteringFromProperties(properties); err != nil {
		r.ClusteringProblem = err.Error()
	} else {
		r.Clustering = cols
	}
	if version >= 0 {
		r.LastCommitVersion = &version
	}
	if commitTimestamp >= 0 {
		r.LastCommitTimestampMs = &commitTimestamp
	}
}
