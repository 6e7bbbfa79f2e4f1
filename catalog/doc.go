// Package catalog is the seam between deltasync's reconcile and the
// catalogs it keeps true to the Delta log: the neutral model every catalog
// kind shares, with no wire client behind it.
//
// # Model
//
// TableName{Catalog, Schema, Table} names a table (ParseTableName reads
// "catalog.schema.table").
//
// StructType / StructField / DataType (with ArrayType and MapType) model a
// Delta schema. ColumnsFromSchemaString and StructType.SchemaString
// convert from and to the log's camelCase schemaString losslessly (field
// metadata is kept as any JSON value, numbers as json.Number); their JSON
// methods use the kebab-case names of Unity Catalog's Delta API.
// UnsupportedTypes reports the types that API cannot take.
//
// Protocol is a table's protocol. A catalog without a structured protocol
// stores it as properties: ProtocolProperties / ProtocolFromProperties
// convert between the two, IsDerivedProperty names the keys a catalog
// derives (never sent as plain properties), DomainMetadata carries the
// clustering and row-tracking domains and DomainMetadataFromProperties /
// ClusteringFromProperties read their projection.
//
// # Errors
//
// A kind's errors answer errors.Is for the neutral classes: ErrConflict
// (the write's guard failed: the record moved since it was read),
// ErrNotFound (no such table, schema or catalog) and ErrRefused (the
// catalog will not take the request as it stands: the same request gets
// the same answer every time). Refusal is how a refusal is reported: the
// server's status, type and message, or the client's own pre-flight
// reason.
//
// # Invariants
//
// The package performs no I/O and links no wire client (no net/http: a
// test keeps it so); each catalog kind is a package beside it (catalog/uc
// for Unity Catalog, catalog/hms for the Hive Metastore) that owns its wire
// model. It reads no environment, holds no package-level state and
// imports neither deltalog nor sync.
package catalog
