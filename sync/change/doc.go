// Package change is deltasync's change control: what a catalog write was,
// and a write kept to be made later.
//
//   - The saved plan (SavedPlan): a dry run's catalog.Writes, as each
//     table's kind prepared them from the record it read, written to a file
//     and applied later exactly (Apply): the same request, guarded by the
//     same record, nothing re-planned or retried.
//   - The audit trail's record of a write (AuditOf, AuditOptions.Record),
//     built from the catalog.Write in one place for a sync's write, a
//     held one and apply's.
//   - What became of a write whose answer was lost (Settle, LostWrite): the
//     record read again says synced, not_applied or, when it cannot be
//     read, unknown.
//
// It imports the neutral model (catalog), sync/plan and sync/audit, and
// nothing of sync: the reconcile uses it when it writes.
package change
