// Package hms is deltasync's client for a Hive Metastore (HMS), the second
// catalog kind: the Thrift calls a sync needs and the pure functions that
// say what "true to the Delta log" means in an HMS record. It holds no
// reconcile logic and imports neither deltalog nor sync (a test keeps it
// so): schemas travel as JSON text (the log's schemaString, which is
// Spark's StructType JSON).
//
// # Client
//
// New(thrift://host:port, Options) speaks unframed binary Thrift (HMS's
// default, no SASL) through the generated bindings of
// github.com/beltran/gohive/hive_metastore. Every call has a deadline (the
// caller's, or Options.Timeout) that also bounds the dial, and ctx
// cancellation interrupts a call in flight; a connection is reused only
// after a reply was read whole. Errors are *Error{Op, Table, Err} with the
// sentinels ErrNotFound, ErrAlreadyExists, ErrConflict (a failed guard),
// ErrRefused (HMS's own refusal, e.g. an incompatible column type change,
// with its message), ErrUnknownFields, ErrUnsupported, ErrLockTimeout.
//
// Calls: Version, Databases, TableNames, GetTable (get_table_req: HMS 4
// removed get_table), GetTables (get_table_objects_by_name_req, batches of
// Options.BatchSize: an unchanged table costs no call of its own),
// AlterTable (alter_table_with_environment_context, in HMS 3 and 4, with
// an optional Guard), LockTable / Lock.Unlock (EXCLUSIVE, table level, no
// transaction), CreateExternalTable (adopt), CreateDatabase, DropTable,
// DropDatabase (records only, never data).
//
// # Guarded writes
//
// An alter replaces the whole table, so Update(db, table, change) does the
// read-modify-write under a guard and re-plans on conflict (change is
// called again on the fresh record, at most UpdateOptions.Attempts times):
//
//   - HMS ≥ 4: the alter's expected_parameter_key/value on
//     transient_lastDdlTime, which every table has (the first write on a
//     Spark-registered table, which has no delta.lastUpdateVersion — an
//     absent key fails any expectation — is guarded like the rest), which
//     the server moves on every alter whose client omits it (Hive's client,
//     hence Spark and Delta's catalog hook, strips it), and which
//     deltasync's own writes set to max(now, read+1) seconds.
//   - HMS 3.x ignores that guard (a stale write wins), so AlterTable refuses
//     to send one there (ErrUnsupported) and Update takes an EXCLUSIVE table
//     lock around read, plan and write, as Trino does.
//
// Detected: any writer that moves transient_lastDdlTime (Hive-client
// writers, another deltasync) on HMS 4; any writer that takes the table lock
// (Trino's metadata writes, another deltasync) on HMS 3. Not detected:
// a writer that neither locks nor moves the guarded key — a client that
// sends transient_lastDdlTime back unchanged (Trino's and raw Thrift
// clients' alters on HMS 4, every non-locking writer on HMS 3) — and, on
// HMS 4, a Hive-client edit made in the same wall-clock second as the value
// deltasync read (the key has one-second resolution). UpdateOptions.AlsoLock
// takes the table lock on HMS 4 as well (two more calls per write), which
// excludes writers that lock but send the key back unchanged (Trino's
// metadata writes); the contract suite shows such a writer's edit lost
// without it and kept with it.
//
// # Fields the client does not know
//
// gohive's IDL predates HMS 4.0 GA (Table fields 26-28 are missing, and
// SkewedInfo.skewedColValueLocationMaps, a map keyed by lists, cannot be
// represented in Go). The reading protocol records every field the
// generated code skipped (Table.Lost); an empty container loses nothing
// and is not recorded. AlterTable refuses a table whose read lost a field
// (ErrUnknownFields) rather than write it back without it. Records that
// HMS 4.0.1 and 3.1.3 return for Spark-registered Delta tables lose
// nothing (the contract suite checks it): Table fields 26-28 are request
// fields HMS 4.0.1 does not persist (its JDO mapping of a table has no
// column for them). Options.Observer sees every call (name, duration,
// error), the seam for metrics.
//
// # The record model
//
// ReadRecord, Apply, NewExternalTable, SplitSchema/ReadSchema, HiveColumns
// are pure. deltasync owns: spark.sql.sources.provider=delta; the schema in
// spark.sql.sources.schema (split into .numParts/.part.N above 4,000
// characters, both forms read, stale parts removed); the partition
// columns in .numPartCols/.partCol.N; comment; delta.lastUpdateVersion and
// delta.lastCommitTimestamp; the log properties (every delta.* key,
// including the protocol versions, and other keys the log has, recorded in
// deltasync.syncedProperties so a key the log drops is removed while a key
// another client set is never touched); Trino's cache keys, removed when
// the table advances past trino_last_transaction_version (their format is
// Trino's; without them Trino reads the log). Never changed: every other
// parameter (server-owned ones — transient_lastDdlTime aside, the guard's
// new value — ServerOwned lists; EXTERNAL; Spark's other spark.sql.* keys),
// the owner, the table type, partition keys, the serde and storage fields
// (sd.location of a Spark EXTERNAL table is a placeholder; the real
// location is the serde parameter path). Columns: ColumnsPlaceholder
// (default; Spark's `col array<string>`, written at registration only) or
// ColumnsReal (the log's schema mapped to Hive types; HMS refuses
// incompatible changes and the refusal is returned as ErrRefused).
package hms
