package hms

import (
	"strings"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// The parameters of an HMS table that say what a Delta table is. Spark
// and Trino trust the provider and the serde parameter `path`; the schema
// and partition keys are Spark's (HiveExternalCatalog), the version keys
// Delta's own catalog-update hook (DeltaConfig).
const (
	KeyProvider            = "spark.sql.sources.provider"
	KeySchema              = sparkprops.KeySchema
	KeySchemaNumParts      = sparkprops.KeySchemaNumParts
	KeySchemaPart          = sparkprops.KeySchemaPart // + N
	KeyNumPartCols         = sparkprops.KeyNumPartCols
	KeyPartCol             = sparkprops.KeyPartCol // + N
	KeyComment             = sparkprops.KeyComment
	KeyLastUpdateVersion   = sparkprops.KeyLastUpdateVersion
	KeyLastCommitTimestamp = sparkprops.KeyLastCommitTimestamp
	KeyMinReaderVersion    = "delta.minReaderVersion"
	KeyMinWriterVersion    = "delta.minWriterVersion"
	// KeySyncedProperties is deltasync's own: a JSON array of the log
	// properties outside the delta.* namespace it last wrote, so a property
	// removed from the log is removed here too, while a parameter another
	// client set (and the log never had) is never touched.
	KeySyncedProperties = sparkprops.KeySyncedProperties
	// Trino's optional cache of a Delta table's columns and comment
	// (DeltaLakeTableMetadataScheduler), valid only while
	// trino_last_transaction_version is the log's version.
	KeyTrinoVersion = sparkprops.KeyTrinoVersion
	KeyTrinoSchema  = sparkprops.KeyTrinoSchema
	// KeyDDLTime is the server's: set at create and, when an alter omits
	// it, to the alter's time (seconds). It is the write guard's key.
	KeyDDLTime = "transient_lastDdlTime"
	// ProviderDelta is the provider value of a Delta table (readers compare
	// it case-insensitively).
	ProviderDelta = "delta"
	// SerdePath is the serde parameter holding a Spark data-source table's
	// real location.
	SerdePath = "path"
	// SchemaPartLength is where Spark splits spark.sql.sources.schema
	// (spark.sql.sources.schemaStringLengthThreshold, 4000 characters).
	SchemaPartLength = sparkprops.SchemaPartLength
)

// serverOwned are parameters the metastore writes itself (stats, DDL time,
// HMS 4's metadata transformer, the Hive 4 client's bucketing version).
// They are never compared; deltasync writes only KeyDDLTime, as the guard's
// new value, which is what the server itself writes on any alter.
var serverOwned = map[string]bool{
	KeyDDLTime: true, "numFiles": true, "totalSize": true, "numFilesErasureCoded": true,
	"numRows": true, "rawDataSize": true, "numPartitions": true, "COLUMN_STATS_ACCURATE": true,
	"bucketing_version": true, "TRANSLATED_TO_EXTERNAL": true, "external.table.purge": true,
	"last_modified_by": true, "last_modified_time": true,
}

// ServerOwned reports whether the metastore owns the parameter key.
func ServerOwned(key string) bool { return serverOwned[key] }

// reserved reports whether key is one deltasync writes for its own
// meaning (provider, schema, partitioning, comment, version, Trino's cache,
// its bookkeeping) or one it never writes (the server's, EXTERNAL, the
// other spark.sql.* keys): a log property of that name cannot be synced.
func reserved(key string) bool {
	switch key {
	case KeyProvider, KeyComment, KeyLastUpdateVersion, KeyLastCommitTimestamp,
		KeySyncedProperties, KeyTrinoVersion, KeyTrinoSchema, "EXTERNAL":
		return true
	}
	return ServerOwned(key) || strings.HasPrefix(key, "spark.sql.")
}

// schemaKey reports whether key is one of the spark.sql.sources.schema
// keys deltasync owns: the schema (whole or in parts) and the partition
// columns. The bucket and sort keys beside them are Spark's.
func schemaKey(key string) bool { return sparkprops.SchemaKey(key) }
