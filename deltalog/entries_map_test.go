package deltalog

import (
	"context"
	"slices"
	"testing"
)

// TestDeltaRsEntriesMapCheckpoint: delta-rs 0.17 writes MAP groups named
// "entries", on which parquet-go's struct mapping panics. deltalog reads
// the leaf columns itself (any MAP group name), so the table loads from
// its v3 checkpoint, not from a JSON fallback.
func TestDeltaRsEntriesMapCheckpoint(t *testing.T) {
	const name = "table_failed_last_checkpoint_update"
	tbl, c := countedCorpusTable(t, name)
	snap, err := tbl.Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 3 || snap.state.cpVersion != 3 {
		t.Errorf("version %d from checkpoint %d, want 3 from 3", snap.Version, snap.state.cpVersion)
	}
	if _, gets := c.counts(); !slices.Contains(gets, "_delta_log/00000000000000000003.checkpoint.parquet") {
		t.Errorf("checkpoint not read: %v", gets)
	}
	if snap.Metadata.ID != "98c9faeb-7940-43eb-9898-50b2a99c0a7e" || len(snap.Schema.Fields) != 4 {
		t.Errorf("metadata %+v", snap.Metadata)
	}
}
