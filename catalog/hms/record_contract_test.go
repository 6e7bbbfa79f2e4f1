package hms

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	hm "github.com/beltran/gohive/hive_metastore"
)

// TestContractRecord: the record model through a real metastore — a
// schema Spark split into parts is read whole; deltasync's write splits
// above 4,000 characters and removes stale parts; every parameter and
// field not deltasync's survives; HMS refuses real columns over Spark's
// placeholder and the refusal carries its reason; a registered table with
// real columns can grow a column.
func TestContractRecord(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db := freshDB(t, c)
			long := longSchema(9000)
			fixture := sparkRegistered(db, "ev", "file:/tmp/"+db+".db", "file://"+t.TempDir())
			delete(fixture.Parameters, KeySchema)
			maps.Copy(fixture.Parameters, SplitSchema(long)) // as Spark writes a long schema
			fixture.Parameters["owner_team"] = "x"
			if err := c.CreateExternalTable(ctx, fixture); err != nil {
				t.Fatal(err)
			}
			stored, err := c.GetTable(ctx, db, "ev")
			if err != nil {
				t.Fatal(err)
			}
			r, err := ReadRecord(stored.Thrift)
			if err != nil || r.Schema != long || !IsDelta(stored.Thrift) {
				t.Fatalf("split schema read back: equal=%v, %v", r.Schema == long, err)
			}

			write := func(d Desired) *Table {
				t.Helper()
				if _, err := c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) { return Apply(s.Thrift, d) }, UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				got, err := c.GetTable(ctx, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			short := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
			got := write(Desired{Schema: short, PartitionColumns: []string{"id"}, Version: 1, CommitTimestamp: 2, Comment: "events"})
			for k := range got.Thrift.Parameters {
				if k == KeySchemaNumParts || strings.HasPrefix(k, KeySchemaPart) {
					t.Errorf("stale schema part %s left after a short schema", k)
				}
			}
			r, err = ReadRecord(got.Thrift)
			if err != nil || r.Schema != short || r.Comment != "events" || r.Version != 1 || len(r.PartitionColumns) != 1 {
				t.Errorf("record after a short schema: %+v, %v", r, err)
			}
			assertSameRecord(t, stored.Thrift, got.Thrift, KeySchema, KeySchemaNumParts, KeySchemaPart+"0", KeySchemaPart+"1", KeySchemaPart+"2",
				KeyNumPartCols, KeyPartCol+"0", KeyComment, KeyLastUpdateVersion, KeyLastCommitTimestamp)

			longer := longSchema(12001)
			got = write(Desired{Schema: longer, Version: 2, CommitTimestamp: 3})
			r, err = ReadRecord(got.Thrift)
			if err != nil || r.Schema != longer || got.Thrift.Parameters[KeySchemaNumParts] != "4" || got.Thrift.Parameters[KeySchema] != "" {
				t.Errorf("long schema: equal=%v numParts=%q, %v", r.Schema == longer, got.Thrift.Parameters[KeySchemaNumParts], err)
			}
			if got.Thrift.Parameters["owner_team"] != "x" || got.Thrift.Parameters[KeyNumPartCols] != "" || r.HasComment {
				t.Errorf("after the long schema: %v", got.Thrift.Parameters)
			}

			// Real columns over the placeholder: HMS refuses, with its reason.
			_, err = c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) {
				return Apply(s.Thrift, Desired{Schema: short, Version: 3, CommitTimestamp: 4, Columns: ColumnsReal})
			}, UpdateOptions{})
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "incompatible") {
				t.Errorf("real columns over the placeholder: %v, want ErrRefused with HMS's reason", err)
			} else {
				t.Logf("refused: %v", err)
			}

			// Register with real columns, then the log adds a column.
			d := Desired{Location: "file://" + t.TempDir(), Schema: short, Version: 0, CommitTimestamp: 1, Columns: ColumnsReal}
			registered, err := NewExternalTable(db, "registered", d)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CreateExternalTable(ctx, registered); err != nil {
				t.Fatal(err)
			}
			wider := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`
			if _, err := c.Update(ctx, db, "registered", func(s *Table) (*hm.Table, error) {
				return Apply(s.Thrift, Desired{Schema: wider, Version: 1, CommitTimestamp: 2, Columns: ColumnsReal})
			}, UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			a, err := c.GetTable(ctx, db, "registered")
			if err != nil {
				t.Fatal(err)
			}
			if cols := a.Thrift.Sd.Cols; len(cols) != 2 || cols[1].Type != "array<string>" || a.Thrift.Sd.SerdeInfo.Parameters[SerdePath] != d.Location {
				t.Errorf("registered table: cols %v, serde %v", cols, a.Thrift.Sd.SerdeInfo.Parameters)
			}
		})
	}
}
