// Package glue is deltasync's client for the AWS Glue Data Catalog, the
// third catalog kind: the Glue calls a sync needs, over the AWS SDK for Go
// v2 (service/glue), and the pure functions that say what "true to the
// Delta log" means in a Glue record. It holds no reconcile logic and
// imports neither deltalog nor sync; schemas travel as JSON text (the
// log's schemaString). docs/kinds/glue.md explains the choices with their
// sources.
//
// # Client
//
// ParseURL reads glue://REGION?catalog_id=…&endpoint=…&archive=…; New
// builds one Client per account and region from the SDK's default
// credential chain, with an endpoint override (BaseEndpoint) and the SDK's
// adaptive retryer (throttling and 5xx retried with backoff; its
// client-side rate limiter shared by every call of the Client, as Glue's
// rate limit is per account and region). Calls: Databases, TablesPages
// (GetTables in pages of 100, whole records: a listing costs no GetTable
// per table), GetTable, Update (UpdateTable with VersionId and, unless
// Config.ArchiveVersions, SkipArchive=true), CreateTable, CreateDatabase,
// DeleteTable. Errors are *Error{Op, Table, Err}; errors.Is finds the
// sentinels ErrConflict (ConcurrentModificationException: the VersionId
// guard failed), ErrNotFound (EntityNotFoundException), ErrRefused
// (InvalidInput, Validation, AccessDenied, ResourceNumberLimitExceeded;
// RefusalOf reports it as a catalog.Refusal) and ErrAlreadyExists, which
// wrap the catalog root's classes; errors.As still finds the SDK's typed
// error.
//
// # The record model
//
// ReadRecord, Apply, NewTableInput, InputOf, LogColumns are pure. A Delta
// table's record has one of three shapes (Shape): Spark's through the Glue
// Hive client (placeholder column, schema in spark.sql.sources.schema*,
// location in the serde `path`), Athena's table_type=DELTA (real columns
// and partition keys, location in sd.Location) and the crawler's native
// one (both). Apply keeps the shape and owns, in it: the schema keys, the
// partition-column keys, the real columns and partition keys where the
// shape has them, the comment parameter, delta.lastUpdateVersion and
// delta.lastCommitTimestamp, the log properties (delta.* keys, and others
// recorded in deltasync.syncedProperties), and Trino's cache keys (removed
// once stale). UpdateTable replaces the whole record, so Apply starts from
// InputOf(stored), a deep copy of every TableInput field; everything not
// owned is written back exactly as read (unset stays unset). A new table
// is registered in the native shape (NewTableInput), which Athena, EMR
// Spark, Trino and Lake Formation all read.
//
// # Kind
//
// Kind is the Glue Data Catalog as a catalog.Kind (NewKind; Name "glue";
// tables <KindOptions.Name>.<database>.<table>, the name defaulting to
// awsdatacatalog). List hands on GetTables pages of whole records, which
// Load plans from without a request; Check adds what a Glue record's
// shape needs (LogColumns against the real columns of an Athena or native
// record; log properties named like Glue keys are unsupported); a write
// is UpdateTable of the whole record planned from (Prepare's Request is
// that TableInput) guarded by its VersionId (Write.Etag), with no re-read
// before it: the VersionId lock means the record is still the one the
// input was made from. A conflict on the SDK's resend of an attempt whose
// answer was lost is ErrOutcomeUnknown, not ErrConflict. Registration and
// Register create the native record (CreateTable); CreateSchema is
// CreateDatabase. An Athena record's columns hold no Delta schema: the
// write records the log's in deltasync.schema (KeyLogSchema).
//
// # Invariants
//
// The package reads no environment itself (the SDK's default chain does,
// in New), holds no package-level mutable state and never deletes or
// recreates a table to change it.
package glue
