// Package hms is deltasync's client for a Hive Metastore (HMS), the second
// catalog kind: the Thrift calls a sync needs and the pure functions that
// say what "true to the Delta log" means in an HMS record, and Kind, the
// metastore as a catalog.Kind. It holds no reconcile logic and imports
// neither deltalog nor sync, only the catalog root's neutral model (a test
// keeps it so): schemas travel as JSON text (the log's schemaString, which
// is Spark's StructType JSON).
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
// ErrNotFound, ErrAlreadyExists, ErrConflict and ErrRefused also answer
// errors.Is for the catalog root's classes of the same meaning.
//
// # Kind
//
// NewKind(client, KindOptions) is the metastore as a catalog.Kind: its
// databases are the schemas of one catalog (KindOptions.Name, "hive").
// List batch-reads the tables a scope wants (two reads in flight) and
// hands each listed record to Load, so an unchanged table costs no call of
// its own. A Write's Request is the edit of the record read and that
// record's fingerprint; Send reads the table again, refuses it as stale
// (ErrStaleRecord) unless it is still that record, and writes the edit
// with WriteFrom — the same request whether a reconcile sends it at once
// or apply sends it from a saved plan.
//
// Calls: Version, Databases, TableNames, GetTable (get_table_req: HMS 4
// removed get_table), GetTables (get_table_objects_by_name_req, batches of
// Options.BatchSize: an unchanged table costs no call of its own),
// AlterTable (alter_table_with_environment_context, in HMS 3 and 4, with
// an optional Guard), LockTable / Lock.Unlock (EXCLUSIVE, table level, no
// transaction), CreateExternalTable (register), CreateDatabase, DropTable,
// DropDatabase (records only, never data).
//
// # Guarded writes
//
// An alter replaces the whole table. WriteFrom (the reconcile's write,
// planned from an earlier read) and Update(db, table, change) (its own
// read-modify-write, re-planned on conflict: change is called again on the
// fresh record, at most UpdateOptions.Attempts times) guard it so that a
// write lowers a record's version only in the cases listed under "Not
// detected" below:
//
//   - HMS ≥ 4: the record is read again just before the alter
//     (stillAsRead: any difference is a conflict), and the alter's
//     expected_parameter_key/value is delta.lastUpdateVersion as read
//     whenever the record has it (the write carries the log's version as
//     the new value; an unchanged version is accepted by HMS 4.0.1);
//     transient_lastDdlTime only for a first write on a table Spark
//     registered without a version (HMS 4 fails any expectation on an
//     absent key). deltasync's writes also set transient_lastDdlTime to
//     max(now, read+1) seconds. The expectation is one key only.
//   - HMS 3.x ignores that guard (a stale write wins), so AlterTable
//     refuses to send one there (ErrUnsupported); WriteFrom and Update
//     take an EXCLUSIVE table lock (as Trino does) and re-read under it
//     (WriteFrom: a record changed since its read is a conflict; Update:
//     it plans from that re-read).
//
// Detected (the write refused and re-planned, the other writer's edit
// kept; the two-writer tests hold deltasync's call in a Thrift proxy while
// the other client writes):
//
//   - HMS 4: a writer that moves delta.lastUpdateVersion at any time before
//     deltasync's alter commits — a raw Thrift client or Trino sending
//     transient_lastDdlTime back as read, and Hive's own client (Spark,
//     Delta's catalog hook) alike, whether deltasync's write moves the
//     version or not; any writer whose edit committed before deltasync's
//     re-read. On a first write (no version yet): a writer that moves
//     transient_lastDdlTime before the alter commits.
//   - HMS 3: any writer whose edit committed before the re-read under the
//     lock (held at deltasync's lock request: refused, or re-planned by
//     Update); any writer that takes the table lock (Trino's metadata
//     writes, another deltasync).
//
// Not detected (the other writer's edit is replaced):
//
//   - HMS 4: a writer that leaves delta.lastUpdateVersion as it was and
//     commits between deltasync's re-read and its alter (milliseconds),
//     whichever client it is; on a first write (no version yet), a writer
//     that sends transient_lastDdlTime back as read in that window — one
//     that sets the version too: the record then ends at deltasync's
//     version, lower than that writer's, the one way a write on HMS 4
//     lowers a version.
//   - HMS 3: a writer that does not lock and lands between the re-read and
//     the alter — no client can detect it on 3.x (the server has no
//     guard); held at deltasync's alter, the other writer's version and
//     key are gone afterwards.
//
// UpdateOptions.AlsoLock takes the table lock on HMS 4 as well (two more
// calls per write), which also excludes writers that lock (Trino's
// metadata writes, another Update with AlsoLock). WriteFrom does not take
// it on HMS 4: HMS 4.0.1 over Derby deadlocks (its TxnHandler's checkLock
// and unlock) under a few concurrent lockers.
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
// # Unset stays unset
//
// gohive's Thrift-0.14 structs cannot tell an unset field of default
// requiredness from an empty one and send every such field, so a write
// back of a record Spark registered would store sd.serdeInfo.name = ""
// (and on HMS 3.1.3 viewOriginalText and viewExpandedText = "") where the
// record had none. The reading protocol records which fields each struct
// instance of a reply held (Table.Present; list elements by index, structs
// inside maps not at all), and an alter's writing protocol leaves out a
// field the read did not have whose value is still the zero value. The
// alter also asks the server not to gather stats (DO_NOT_UPDATE_STATS: it
// changes no data), which it would otherwise add (numFiles, totalSize,
// numFilesErasureCoded) to a record without them. A raw comparison (every
// field id of the reply, decoded without generated structs) of a
// Spark-registered record before and after a write shows only the
// parameters deltasync owns and transient_lastDdlTime changed, on HMS
// 4.0.1 and 3.1.3.
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
