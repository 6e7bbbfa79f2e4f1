// Package deltalog reads a Delta table's transaction log (_delta_log) from
// object storage and replays it into an immutable Snapshot: version,
// protocol, metadata, schema, commit timestamp and domain metadata.
//
// Reading follows the Delta protocol in stages, each a value of its own:
// file names are parsed into typed log paths (path.go); the listing is
// turned into a validated segment, the newest complete checkpoint plus a
// contiguous run of commits after it, compaction files standing in for
// ranges of commits (segment.go); protocol and metaData are replayed
// newest first and the replay stops as soon as both are found
// (replay.go). Checkpoints are read for their protocol, metaData and
// domainMetadata columns only, and in them only the rows holding those
// actions (checkpoint_parquet.go, checkpoint_leaf.go); v2 sidecars are
// never opened. _last_checkpoint is only a hint for where to start
// listing. Catalog-managed tables take the catalog's ratified commits
// (LoadOptions) in place of published ones. Refresh advances a previous
// snapshot with one LIST and reads only the new commits.
//
// Hostile input (checkpoint_check.go, utf8.go, commitstream.go, budget.go,
// mempool.go):
// a checkpoint's footer, indexes and pages are checked before parquet-go
// reads them, so a structure that does not add up is ErrCorrupt, never an
// absent action, and nothing is allocated from a size a file claims or
// inflated past what a page claims (at most 64 MiB); strings kept from
// the log must be UTF-8; commits over 1 MiB are parsed as they stream and
// a _last_checkpoint over 1 MiB is ignored; LoadOptions.MaxLoadBytes
// bounds what one Load holds at once (ErrBudgetExceeded), and a
// MemoryPool (WithMemoryPool) what all the Loads of a process hold
// together: a Load that does not fit waits, the oldest always goes on.
//
// Invariants: storage is only ever read; a Snapshot is never mutated after
// it is returned; every refused log yields a *LogError naming the table, the
// file (and line) and the reason, which wraps one of the Err* sentinels; no
// input makes the package panic. deltalog imports neither catalog nor sync.
package deltalog
