package glue

import "github.com/deltasync/deltasync/internal/sparkprops"

// MaxSchemaLength bounds the bytes a split schema's parts may join to.
const MaxSchemaLength = sparkprops.MaxSchemaLength

// ReadSchema joins a table's schema as Spark and the crawler store it
// (sparkprops.ReadSchema: the single key spark.sql.sources.schema, or
// .numParts with .part.N).
func ReadSchema(params map[string]string) (schema string, ok bool, err error) {
	return sparkprops.ReadSchema(params)
}

// SplitSchema is how the schema is written: one key when it has at most
// SchemaPartLength characters (as Java counts them) and split is false,
// else numParts and parts; split keeps the form of a record that holds
// parts (the crawler writes numParts=1 even for a short schema).
func SplitSchema(schema string, split bool) map[string]string {
	return sparkprops.SplitSchema(schema, split)
}

// readPartitionKeys reads spark.sql.sources.schema.numPartCols and
// .partCol.N (none: nil, false).
func readPartitionKeys(params map[string]string) ([]string, bool, error) {
	return sparkprops.ReadPartitionColumns(params)
}

// partitionParams is how Spark writes partition columns (none: no keys).
func partitionParams(cols []string) map[string]string { return sparkprops.PartitionParams(cols) }
