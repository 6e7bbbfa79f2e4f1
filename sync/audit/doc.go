// Package audit is deltasync's audit trail: one JSON record (Record) for
// every catalog write and every write refused or held, appended as one
// line to a JSON-lines file that is fsynced after each record and rotated
// by size (Writer), and/or written to stderr.
//
// Invariants: a record is on disk (fsync returned) before Write returns;
// a record is one line, never split over two files (rotation happens
// between records); a record holds nothing secret (callers put in it
// table names, ids, etags, wire action names and the classified changes
// of the plan, never a token, a credential or a location's query).
//
// A write whose answer was lost (a timeout, a cut connection, a 5xx, a
// 409 to the resend of one of those) is recorded as what reading the
// record again showed: synced with the etag after, or not_applied; only
// when that read fails too is it unknown, and a later record of the table
// with Resolves set to its time says what became of it. Read in order,
// with each unknown record replaced by the one resolving it, the synced
// records' etags chain as the catalog's own history of writes.
//
// The record's shape is published as a JSON Schema in
// sync/schemas/audit-record.schema.json; its format_version follows the
// rule in the README ("Formats and their versions").
//
// The package imports nothing of the module.
package audit
