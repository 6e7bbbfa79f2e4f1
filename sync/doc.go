// Package sync compares what each Delta table's log says with what Unity
// Catalog records, and acts: it pushes metadata-only syncs to EXTERNAL tables
// and flags divergence everywhere else. The log always wins; storage is never
// written. The daemon, the one-shot job and the plan command all run the same
// per-table reconcile defined here (Reconciler.Sync, Reconciler.Reconcile).
//
// The stages are separate:
//
//   - reconcile (Reconciler): level-based — a full reconcile re-reads both
//     sides, the catalog record (Delta API load; the comment from the
//     listing, or a classic get when the listing is older than the record)
//     and the log (incremental deltalog Refresh of the previous snapshot).
//     An EXTERNAL table last found in sync is confirmed unchanged without
//     a per-table catalog read while its listed updated_at stays the same
//     and one LIST of its log shows no newer version (fastpath.go), and
//     fully re-read at least every Options.ResyncInterval. One reconcile
//     is load (both sides) → decide (a typed decision: write, in sync, or
//     flag and why) → apply (reconcile.go); the words it reports in are in
//     outcome.go. A catalog without the Delta API is read with the classic
//     API and never written (catalog/uc);
//   - diff (sync/plan's Diff): a pure, total, deterministic function from
//     (LogState, Record) to a typed Plan; server-derived keys and
//     representation differences are normalised away first, so a
//     faithfully registered table always diffs empty;
//   - apply (plan.Plan.Edit, catalog.Kind.Prepare and Send): exactly the
//     changes that fix the plan, sent in ONE write guarded by the record
//     they were planned from (Unity Catalog: one updateTable asserting the
//     uuid and etag), only when something differs (every update rolls the
//     server's etag). The catalog is one catalog.Kind (Options.Catalog),
//     chosen by the caller; sync never sees a kind's wire types.
//
// What triggers work is a source: the cron cycle (Sync) or one outside this
// package (sync/events), which reconciles through the exported Reconcile
// and marks tables in a Dirty the reconciler consults before reading a
// log (dirty.go). This package imports none of its sources. Storage
// locations are spelled by sync/location.
//
// Invariants: nothing is written for an empty plan, for MANAGED or
// catalog-managed tables, for tables in warn mode, for logs with types the
// catalog cannot store, for a differing location, for a catalog without
// the Delta API, or when the catalog's
// watermark is newer than the log; an etag conflict means reload and
// re-plan (bounded); a write is confirmed by reloading and re-diffing.
//
// The package reads no flags or environment, holds no global state, logs to
// the *zap.Logger and registers metrics on the prometheus.Registerer it is
// given. It shadows the standard library's sync, imported here as stdsync.
package sync
