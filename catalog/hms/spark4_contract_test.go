package hms

import (
	"context"
	"testing"

	hm "github.com/beltran/gohive/hive_metastore"
)

// TestContractSparkHive4Records: the records Spark writes through its
// Hive 4 client into HMS 4 — a managed Delta table (which HMS 4 turns
// EXTERNAL) and one Delta's catalog hook kept up — are read as Delta
// records, lose no field, and keep every key that is not deltasync's
// through a write.
func TestContractSparkHive4Records(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db := freshDB(t, c)
	loc := "file://" + t.TempDir()
	managed := sparkHive4(db, "ev_managed", loc, loc+"/ev_managed", true, false)
	if _, err := c.call(ctx, "create_table", db+".ev_managed", func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.CreateTable(ctx, managed)
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateExternalTable(ctx, sparkHive4(db, "ev_sync", loc, loc+"/ev_sync", false, true)); err != nil {
		t.Fatal(err)
	}

	m, err := c.GetTable(ctx, db, "ev_managed")
	if err != nil {
		t.Fatal(err)
	}
	p := m.Thrift.Parameters
	if m.Thrift.TableType != "EXTERNAL_TABLE" || p["TRANSLATED_TO_EXTERNAL"] != "TRUE" || p["EXTERNAL"] != "TRUE" {
		t.Errorf("HMS 4 did not translate the managed table: %s %v", m.Thrift.TableType, p)
	}
	t.Logf("managed Delta table as HMS 4 stores it: %s %v", m.Thrift.TableType, p)
	if len(m.Lost) > 0 || !IsDelta(m.Thrift) {
		t.Errorf("lost %v, delta %v", m.Lost, IsDelta(m.Thrift))
	}
	if _, err := c.Update(ctx, db, "ev_managed", func(s *Table) (*hm.Table, error) {
		return Apply(s.Thrift, Desired{Schema: hookSchema, Version: 1, CommitTimestamp: 2})
	}, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := c.GetTable(ctx, db, "ev_managed")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TRANSLATED_TO_EXTERNAL", "external.table.purge", "bucketing_version", "EXTERNAL", "spark.sql.create.version"} {
		if after.Thrift.Parameters[k] != p[k] {
			t.Errorf("%s: %q before, %q after deltasync's write", k, p[k], after.Thrift.Parameters[k])
		}
	}
	if after.Thrift.TableType != m.Thrift.TableType || after.Thrift.Sd.Location != m.Thrift.Sd.Location {
		t.Errorf("type or location changed: %s %s", after.Thrift.TableType, after.Thrift.Sd.Location)
	}

	h, err := c.GetTable(ctx, db, "ev_sync")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecord(h.Thrift)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 3 || r.CommitTimestamp != 1796152896367 || r.Schema != hookSchema || r.Location != loc+"/ev_sync" ||
		r.Properties[KeyMinReaderVersion] != "1" || r.Properties[KeyMinWriterVersion] != "2" || len(r.Properties) != 2 {
		t.Errorf("hook-written record read as %+v", r)
	}
}
