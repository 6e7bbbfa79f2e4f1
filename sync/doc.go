// Package sync compares what each Delta table's log says with what Unity
// Catalog records, and acts: it pushes metadata-only syncs to EXTERNAL tables
// and flags divergence everywhere else. The log always wins; storage is never
// written. The daemon, the one-shot job and the plan command all run the same
// per-table reconcile defined here.
package sync
