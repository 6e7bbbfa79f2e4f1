// Package deltalog reads a Delta table's transaction log (_delta_log) from
// object storage and replays it into an immutable Snapshot: version,
// protocol, metadata, schema and commit timestamp.
//
// Invariants: storage is only ever read; a Snapshot is never mutated after
// it is returned; every refused log yields a *LogError naming the table, the
// file and the reason. deltalog imports neither catalog nor sync.
package deltalog
