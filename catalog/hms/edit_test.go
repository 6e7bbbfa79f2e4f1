package hms

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEdit: the edit of a sync's write (Apply) made again to the record
// it was computed from gives exactly that write, but for
// transient_lastDdlTime (the guard's); every edit a sync makes passes
// Check; the stored record is not changed by either.
func TestEdit(t *testing.T) {
	for _, cols := range []Columns{ColumnsPlaceholder, ColumnsReal} {
		stored := sparkRegistered("db", "t", "file:/w", "file:/w/t")
		maps.Copy(stored.Parameters, map[string]string{"transient_lastDdlTime": "100", "owner_team": "x",
			KeyTrinoVersion: "3", KeyTrinoSchema: "[...]", "comment": "old", "delta.appendOnly": "true"})
		before := cloneTable(stored)
		next, err := Apply(stored, Desired{
			Schema:           `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"comment":"the id"}}]}`,
			PartitionColumns: []string{"id"}, Properties: map[string]string{"delta.minReaderVersion": "1", "team.kept": "z"},
			Version: 4, CommitTimestamp: 1796152896367, Columns: cols,
		})
		if err != nil {
			t.Fatal(err)
		}
		e := EditOf(stored, next)
		if err := e.Check(); err != nil {
			t.Errorf("columns %v: a sync's own edit fails Check: %v", cols, err)
		}
		if _, ok := e.Set[KeyDDLTime]; ok || e.Set[KeyLastUpdateVersion] != "4" || len(e.Remove) == 0 {
			t.Errorf("columns %v: edit %+v", cols, e)
		}
		if (len(e.Columns) > 0) != (cols == ColumnsReal) {
			t.Errorf("columns %v: columns in the edit: %v", cols, e.Columns)
		}
		got := e.ApplyTo(stored)
		if d := cmp.Diff(next, got); d != "" {
			t.Errorf("columns %v: the edit made to the stored record differs from the write (-write +edit):\n%s", cols, d)
		}
		if d := cmp.Diff(before, stored); d != "" {
			t.Errorf("columns %v: the stored record changed:\n%s", cols, d)
		}
		if !EditOf(stored, stored).Empty() {
			t.Errorf("columns %v: the edit of a record to itself is not empty", cols)
		}
	}
}
