package hms

import "github.com/deltasync/deltasync/internal/sparkprops"

// ReadSchema joins a table's schema as Spark stores it (sparkprops.ReadSchema:
// the single key spark.sql.sources.schema, or .numParts with .part.N).
func ReadSchema(params map[string]string) (schema string, ok bool, err error) {
	return sparkprops.ReadSchema(params)
}

// MaxSchemaLength bounds the bytes a split schema's parts may join to.
const MaxSchemaLength = sparkprops.MaxSchemaLength

// SplitSchema is how the schema is written: one key when it has at most
// SchemaPartLength characters (as Java counts them), else numParts and
// parts.
func SplitSchema(schema string) map[string]string { return sparkprops.SplitSchema(schema, false) }

// ReadPartitionColumns reads spark.sql.sources.schema.numPartCols and
// .partCol.N (none: nil).
func ReadPartitionColumns(params map[string]string) ([]string, error) {
	cols, _, err := sparkprops.ReadPartitionColumns(params)
	return cols, err
}

// partitionParams is how partition columns are written (none: no keys,
// as Spark writes an unpartitioned table).
func partitionParams(cols []string) map[string]string { return sparkprops.PartitionParams(cols) }
