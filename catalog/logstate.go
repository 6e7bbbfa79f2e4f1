package catalog

// LogState is what a table's Delta log says, the desired side of a Diff.
type LogState struct {
	Version         int64
	CommitTimestamp int64 // ms
	// CommitTimestampInLog reports whether CommitTimestamp is written in
	// the log (an in-commit timestamp or commitInfo.timestamp) rather than
	// a file's modification time, which is no evidence of when the commit
	// was made (see behindLog).
	CommitTimestampInLog bool
	// Protocol is the log's protocol action in the Delta API model.
	Protocol Protocol
	// SchemaString, PartitionColumns, Configuration and Description are
	// the metaData action's fields. SchemaString is "" when the log was
	// read from a cached compact snapshot, which keeps only the schema's
	// digest (schemaIs answers for it).
	SchemaString     string
	PartitionColumns []string
	Configuration    map[string]string
	Description      string
	// Clustering is the delta.clustering domain's column paths; nil when
	// the table is not clustered.
	Clustering [][]string
	// Location is where the log was read (the catalog's location).
	Location string
	// TableID is the metaData.id.
	TableID string
	// Recreated is set when the log is behind the catalog's watermark
	// because it is another table at the same location: the evidence,
	// carried into the plan's VersionChange (see behindLog).
	Recreated string
	// SchemaIs reports whether a schema string is the log's, byte for
	// byte; nil compares with SchemaString. A log read from a compact
	// snapshot answers through it (its digest) with SchemaString "".
	SchemaIs func(schemaString string) bool
}

// SchemaElided reports whether the log's schema string is not at hand,
// only whether a given one is it.
func (l *LogState) SchemaElided() bool { return l.SchemaString == "" && l.SchemaIs != nil }

// SchemaIsCatalogs reports whether rec's columns, written in the log's
// form, are the log's schemaString byte for byte.
func (l *LogState) SchemaIsCatalogs(rec *Record) bool {
	s, err := rec.ColumnsAsLog()
	if err != nil {
		return false
	}
	if l.SchemaIs != nil {
		return l.SchemaIs(s)
	}
	return s == l.SchemaString
}
