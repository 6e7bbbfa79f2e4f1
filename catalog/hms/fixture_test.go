package hms

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
	"github.com/deltasync/deltasync/internal/testenv"
)

// metastore returns a client for the real HMS named by env (set by
// .ci/setup-hms.sh: DELTASYNC_HMS4_URL, DELTASYNC_HMS3_URL), skipping
// under -short and when it is missing (failing in CI).
func metastore(t *testing.T, env string) *Client {
	t.Helper()
	testenv.Suite(t)
	uri := testenv.Getenv(t, env, testenv.External, env+" is unset: no real Hive Metastore (start one with `DELTASYNC_CACHE=.cache bash .ci/setup-hms.sh start`)")
	c, err := New(uri, Options{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// freshDB creates a database of the test's own, dropped (records only) at
// the end.
func freshDB(t *testing.T, c *Client) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	db := "ds_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if err := c.CreateDatabase(ctx, db, "file://"+t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DropDatabase(context.Background(), db, true); err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
	return db
}

// sparkRegistered is a table as Spark 4.2.0 + delta-spark 4.4.0 register a
// Delta table in HMS (`CREATE TABLE db.t (...) USING delta LOCATION '...'`,
// catalog.update.enabled off — the default), field for field as dumped
// from a real HMS in ../shared/docs/hms-notes.md §3: EXTERNAL, the
// placeholder column `col array<string>`, the real location only in the
// serde parameter `path`, a -__PLACEHOLDER__ sd.location, an empty-struct
// schema, no Delta properties and no delta.lastUpdateVersion.
func sparkRegistered(db, name, dbLocation, location string) *hm.Table {
	t := hm.NewTable()
	t.DbName, t.TableName, t.Owner = db, name, "root"
	t.TableType = "EXTERNAL_TABLE"
	t.PartitionKeys = []*hm.FieldSchema{}
	t.Parameters = map[string]string{
		"EXTERNAL":                    "TRUE",
		"spark.sql.create.version":    "4.2.0",
		"spark.sql.partitionProvider": "catalog",
		"spark.sql.sources.provider":  "delta",
		"spark.sql.sources.schema":    `{"type":"struct","fields":[]}`,
	}
	sd := hm.NewStorageDescriptor()
	sd.Cols = []*hm.FieldSchema{{Name: "col", Type: "array<string>", Comment: "from deserializer"}}
	sd.Location = dbLocation + "/" + name + "-__PLACEHOLDER__"
	sd.InputFormat = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	sd.OutputFormat = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	sd.SerdeInfo = &hm.SerDeInfo{
		SerializationLib: "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
		Parameters:       map[string]string{"path": location, "serialization.format": "1"},
	}
	sd.BucketCols = []string{}
	sd.SortCols = []*hm.Order{}
	sd.Parameters = map[string]string{}
	t.Sd = sd
	return t
}

// hookSchema is the schema Delta's catalog-update hook wrote for table
// ev_sync in the notes (id long, name string, extra integer).
const hookSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"extra","type":"integer","nullable":true,"metadata":{}}]}`

// sparkHive4 is the same registration through Spark's Hive 4.0.1 client
// (spark.sql.hive.metastore.version=4.0.1), which adds bucketing_version=2;
// managed makes it the managed form (MANAGED_TABLE, no EXTERNAL, the real
// location in sd.location and path), which HMS 4 turns into an EXTERNAL
// table; hook adds what Delta's catalog-update hook writes
// (spark.databricks.delta.catalog.update.enabled=true) after version 3.
func sparkHive4(db, name, dbLocation, location string, managed, hook bool) *hm.Table {
	t := sparkRegistered(db, name, dbLocation, location)
	t.Parameters["bucketing_version"] = "2"
	if managed {
		t.TableType = "MANAGED_TABLE"
		delete(t.Parameters, "EXTERNAL")
		t.Sd.Location = location
	}
	if hook {
		t.Parameters[KeySchema] = hookSchema
		t.Parameters[KeyLastUpdateVersion] = "3"
		t.Parameters[KeyLastCommitTimestamp] = "1796152896367"
		t.Parameters[KeyMinReaderVersion] = "1"
		t.Parameters[KeyMinWriterVersion] = "2"
	}
	return t
}
