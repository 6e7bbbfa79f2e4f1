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
