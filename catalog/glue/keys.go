package glue

import (
	"strings"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// The parameters of a Glue table that say what a Delta table is. The
// spark.sql.* keys are Spark's (HiveExternalCatalog, carried into Glue by
// the Glue Hive client), table_type Athena's, classification the
// crawler's, the version keys Delta's catalog-update hook's (the crawler
// writes the same two).
const (
	KeyProvider            = "spark.sql.sources.provider"
	KeySchema              = sparkprops.KeySchema
	KeySchemaNumParts      = sparkprops.KeySchemaNumParts
	KeySchemaPart          = sparkprops.KeySchemaPart // + N
	KeyNumPartCols         = sparkprops.KeyNumPartCols
	KeyPartCol             = sparkprops.KeyPartCol // + N
	KeyTableType           = "table_type"
	KeyClassification      = "classification"
	KeyComment             = sparkprops.KeyComment
	KeyLastUpdateVersion   = sparkprops.KeyLastUpdateVersion
	KeyLastCommitTimestamp = sparkprops.KeyLastCommitTimestamp
	// KeySyncedProperties is deltasync's own: a JSON array of the log
	// properties outside the delta.* namespace it last wrote, so a property
	// removed from the log is removed here too, while a parameter another
	// client set is never touched (as in catalog/hms).
	KeySyncedProperties = sparkprops.KeySyncedProperties
	// KeyLogSchema is deltasync's own too, in an Athena-shaped record
	// only: the log's schemaString the record's columns were last made
	// from. An Athena record holds no Delta schema (its columns are Hive
	// types, without nullability or field metadata), so without it the
	// record could never be compared with the log's schema; with it, the
	// schema is compared as in the other shapes, and the columns are
	// checked against it (SameColumns) by the kind.
	KeyLogSchema = "deltasync.schema"
	// Trino's optional cache of a Delta table's columns and comment, valid
	// only while trino_last_transaction_version is the log's version.
	KeyTrinoVersion = sparkprops.KeyTrinoVersion
	KeyTrinoSchema  = sparkprops.KeyTrinoSchema
	// ProviderDelta and TableTypeDelta are the values readers compare
	// case-insensitively.
	ProviderDelta  = "delta"
	TableTypeDelta = "DELTA"
	// SerdePath is the serde parameter holding the real location of a
	// Spark data-source table (Spark and Trino read it; Athena too).
	SerdePath = "path"
	// SchemaPartLength is where Spark splits spark.sql.sources.schema
	// (spark.sql.sources.schemaStringLengthThreshold, 4000 characters).
	SchemaPartLength = sparkprops.SchemaPartLength
	// MaxColumnComment is Glue's limit on a column comment (the model's
	// CommentString: 0..255 characters).
	MaxColumnComment = 255
)

// reserved reports whether key is one deltasync writes for its own
// meaning or one it never writes (other clients' markers): a log property
// of that name cannot be synced.
func reserved(key string) bool {
	switch key {
	case KeyProvider, KeyComment, KeyLastUpdateVersion, KeyLastCommitTimestamp, KeySyncedProperties, KeyLogSchema,
		KeyTrinoVersion, KeyTrinoSchema, KeyTableType, KeyClassification, "EXTERNAL", "UPDATED_BY_CRAWLER":
		return true
	}
	return strings.HasPrefix(key, "spark.sql.") || strings.HasPrefix(key, "Crawler")
}

// schemaKey reports whether key is one of the spark.sql.sources.schema
// keys deltasync owns: the schema (whole or in parts) and the partition
// columns. The bucket and sort keys beside them are Spark's.
func schemaKey(key string) bool { return sparkprops.SchemaKey(key) }
