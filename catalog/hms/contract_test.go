package hms

import (
	"context"
	"errors"
	"maps"
	"os"
	stdsync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
)

var servers = []struct{ name, env string }{
	{"hms4", "DELTASYNC_HMS4_URL"},
	{"hms3", "DELTASYNC_HMS3_URL"},
}

// TestContractCalls: every call deltasync relies on, against each real
// metastore, on a table registered the way Spark registers it.
func TestContractCalls(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			v, err := c.Version(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("getVersion: %s", v)
			db := freshDB(t, c)
			loc := "file://" + t.TempDir()
			for _, n := range []string{"ev", "ev2"} {
				if err := c.CreateExternalTable(ctx, sparkRegistered(db, n, "file:/tmp/"+db+".db", loc+"/"+n)); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.CreateExternalTable(ctx, sparkRegistered(db, "ev", "file:/tmp", loc)); !errors.Is(err, ErrAlreadyExists) {
				t.Errorf("second create: %v, want ErrAlreadyExists", err)
			}
			dbs, err := c.Databases(ctx)
			if err != nil || !contains(dbs, db) {
				t.Fatalf("Databases = %v, %v; want %s among them", dbs, err, db)
			}
			names, err := c.TableNames(ctx, db)
			if err != nil || len(names) != 2 {
				t.Fatalf("TableNames = %v, %v", names, err)
			}
			got, err := c.GetTable(ctx, db, "ev")
			if err != nil {
				t.Fatal(err)
			}
			if p := got.Thrift.Sd.SerdeInfo.Parameters["path"]; p != loc+"/ev" {
				t.Errorf("serde path = %q, want %q", p, loc+"/ev")
			}
			if got.Thrift.Parameters["transient_lastDdlTime"] == "" {
				t.Errorf("no transient_lastDdlTime on a stored table: %v", got.Thrift.Parameters)
			}
			// The proof that a read-modify-write of this record loses
			// nothing: the reply had no field this client's IDL skipped.
			if len(got.Lost) > 0 {
				t.Errorf("get_table_req of a Spark-registered table lost fields %v", got.Lost)
			}
			batch, err := c.GetTables(ctx, db, []string{"ev", "ev2", "gone"})
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != 2 || batch["ev"] == nil || batch["ev2"] == nil {
				t.Errorf("GetTables = %v, want ev and ev2 only", keys(batch))
			}
			_, err = c.GetTable(ctx, db, "gone")
			var he *Error
			if !errors.Is(err, ErrNotFound) || !errors.As(err, &he) || he.Table != "hive."+db+".gone" {
				t.Errorf("GetTable(gone) = %v, want ErrNotFound naming hive.%s.gone", err, db)
			}
			// Unguarded alter: only the parameter changes, all else stays.
			next := deepCopy(got.Thrift)
			next.Parameters["owner_team"] = "x"
			if err := c.AlterTable(ctx, got, next, Guard{}); err != nil {
				t.Fatal(err)
			}
			after, err := c.GetTable(ctx, db, "ev")
			if err != nil {
				t.Fatal(err)
			}
			if after.Thrift.Parameters["owner_team"] != "x" {
				t.Errorf("alter did not land: %v", after.Thrift.Parameters)
			}
			assertSameRecord(t, got.Thrift, after.Thrift, "owner_team")
		})
	}
}

// assertSameRecord fails when b differs from a in anything but the named
// parameters and the server's own bookkeeping.
func assertSameRecord(t *testing.T, a, b *hm.Table, changed ...string) {
	t.Helper()
	pa, pb := maps.Clone(a.Parameters), maps.Clone(b.Parameters)
	for _, m := range []map[string]string{pa, pb} {
		for k := range m {
			if ServerOwned(k) || contains(changed, k) {
				delete(m, k)
			}
		}
	}
	if !maps.Equal(pa, pb) {
		t.Errorf("parameters changed:\n before %v\n after  %v", pa, pb)
	}
	if a.Owner != b.Owner || a.TableType != b.TableType || a.Sd.Location != b.Sd.Location ||
		a.Sd.InputFormat != b.Sd.InputFormat || a.Sd.OutputFormat != b.Sd.OutputFormat ||
		a.Sd.SerdeInfo.SerializationLib != b.Sd.SerdeInfo.SerializationLib ||
		!maps.Equal(a.Sd.SerdeInfo.Parameters, b.Sd.SerdeInfo.Parameters) ||
		len(a.Sd.Cols) != len(b.Sd.Cols) || a.CreateTime != b.CreateTime {
		t.Errorf("record changed beyond %v:\n before %+v %+v\n after  %+v %+v", changed, a, a.Sd, b, b.Sd)
	}
}

func deepCopy(t *hm.Table) *hm.Table {
	n := *t
	n.Parameters = maps.Clone(t.Parameters)
	if t.Sd != nil {
		sd := *t.Sd
		if t.Sd.SerdeInfo != nil {
			si := *t.Sd.SerdeInfo
			si.Parameters = maps.Clone(t.Sd.SerdeInfo.Parameters)
			sd.SerdeInfo = &si
		}
		sd.Cols = append([]*hm.FieldSchema(nil), t.Sd.Cols...)
		sd.Parameters = maps.Clone(t.Sd.Parameters)
		n.Sd = &sd
	}
	return &n
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestContractBatchCost: reading N tables costs ceil(N/BatchSize) calls,
// one connection reused, never one get per table.
func TestContractBatchCost(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			ctx := context.Background()
			db := freshDB(t, c)
			var names []string
			for i := range 5 {
				n := "t" + string(rune('0'+i))
				names = append(names, n)
				if err := c.CreateExternalTable(ctx, sparkRegistered(db, n, "file:/tmp", "file:///tmp/"+db+"/"+n)); err != nil {
					t.Fatal(err)
				}
			}
			calls := map[string]int{}
			var mu stdsync.Mutex
			counted, err := New(os.Getenv(s.env), Options{BatchSize: 2, Observer: func(op string, _ time.Duration, err error) {
				mu.Lock()
				defer mu.Unlock()
				calls[op]++
				if err != nil {
					t.Errorf("%s: %v", op, err)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer counted.Close()
			got, err := counted.GetTables(ctx, db, names)
			if err != nil || len(got) != 5 {
				t.Fatalf("GetTables = %d tables, %v", len(got), err)
			}
			if want := map[string]int{"get_table_objects_by_name_req": 3}; !maps.Equal(calls, want) {
				t.Errorf("calls = %v, want %v", calls, want)
			}
			if n := len(counted.idle); n != 1 {
				t.Errorf("%d idle connections after 3 sequential calls, want 1 (reused)", n)
			}
		})
	}
}
