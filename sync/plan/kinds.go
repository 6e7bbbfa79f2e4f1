package plan

// DriftKind is one kind of difference between the log and the catalog.
type DriftKind string

// The kinds of drift. All but KindVersion are the label values of
// deltasync_table_drift (sync's driftKinds); KindVersion (the catalog's watermark
// lags the log) is not drift in metadata and is only reported in plans.
const (
	KindSchema       DriftKind = "schema"
	KindPartitioning DriftKind = "partitioning"
	KindClustering   DriftKind = "clustering"
	KindProtocol     DriftKind = "protocol"
	KindProperties   DriftKind = "properties"
	KindComment      DriftKind = "comment"
	KindLocation     DriftKind = "location"
	// KindUniform is read-only drift: the catalog's UniForm Iceberg pointer
	// (loadTable's uniform.iceberg) is missing, or converted at a version
	// behind the log's, while the log enables UniForm Iceberg. Unity Catalog
	// serves Iceberg readers (its Iceberg REST endpoint) from that pointer,
	// and the Delta API takes it for an EXTERNAL table only at create
	// (createTable's uniform; updateTable has no action for it, add-commit is
	// for MANAGED tables; delta-io/delta#4922): deltasync reports it and never
	// writes it.
	KindUniform DriftKind = "uniform"
	KindVersion DriftKind = "version"
)
