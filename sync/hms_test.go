package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	gosync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// hmsEnv is one Hive Metastore (the in-process fake, or a real one) with
// a fresh database, and a client whose every call is counted.
type hmsEnv struct {
	t      *testing.T
	fake   *fakehms.Server // nil on a real metastore
	client *hms.Client
	// plain is a second client: another writer.
	plain *hms.Client
	url   string
	db    string
	mu    gosync.Mutex
	calls map[string]int
	// afterCall, when set, runs after each of the counted client's calls.
	afterCall func(op string)
}

// hmsTargets are the metastores the HMS sync tests run against: the fake
// as HMS 4 and HMS 3, and the real HMS 4.0.1 and 3.1.3 that
// .ci/setup-hms.sh starts (DELTASYNC_HMS4_URL, DELTASYNC_HMS3_URL): those
// skip when unset, and fail instead under DELTASYNC_REQUIRE_EXTERNAL=1.
var hmsTargets = []struct{ name, fake, env string }{
	{"fake4", "4.0.1", ""},
	{"fake3", "3.0", ""},
	{"hms4", "", "DELTASYNC_HMS4_URL"},
	{"hms3", "", "DELTASYNC_HMS3_URL"},
}

func forEachHMS(t *testing.T, f func(t *testing.T, e *hmsEnv)) {
	for _, tg := range hmsTargets {
		t.Run(tg.name, func(t *testing.T) {
			f(t, newHMSEnv(t, tg.fake, tg.env))
		})
	}
}

func newHMSEnv(t *testing.T, fakeVersion, env string) *hmsEnv {
	t.Helper()
	e := &hmsEnv{t: t, calls: map[string]int{}}
	var url string
	if fakeVersion != "" {
		e.fake = fakehms.New(t, fakeVersion)
		url = e.fake.URL
	} else {
		url = testenv.Getenv(t, env, testenv.External, env+" is unset: no real Hive Metastore (start one with `DELTASYNC_CACHE=.cache bash .ci/setup-hms.sh start`)")
	}
	e.url = url
	var err error
	e.client, err = hms.New(url, hms.Options{Timeout: time.Minute, Observer: func(op string, _ time.Duration, _ error) {
		e.mu.Lock()
		e.calls[op]++
		hook := e.afterCall
		e.mu.Unlock()
		if hook != nil {
			hook(op)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.plain, err = hms.New(url, hms.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Close(); _ = e.plain.Close() })
	var b [4]byte
	_, _ = rand.Read(b[:])
	e.db = "ds_" + hex.EncodeToString(b[:])
	if e.fake == nil {
		ctx := context.Background()
		if err := e.plain.CreateDatabase(ctx, e.db, "file://"+t.TempDir()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.plain.DropDatabase(context.Background(), e.db, true) })
	}
	return e
}

// takeCalls returns the counted calls since the last take.
func (e *hmsEnv) takeCalls() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.calls
	e.calls = map[string]int{}
	return c
}

// sparkRegister registers a table the way Spark 4.2 + delta-spark 4.4.0
// do (catalog/hms's fixture, from the records in hms-notes.md §3):
// EXTERNAL, the placeholder column, the real location only in the serde
// parameter path, a -__PLACEHOLDER__ sd.location, an empty-struct schema,
// no Delta properties.
func (e *hmsEnv) sparkRegister(name, location string) {
	e.t.Helper()
	t := sparkTable(e.db, name, location)
	if e.fake != nil {
		e.fake.Put(t)
		return
	}
	if err := e.plain.CreateExternalTable(context.Background(), t); err != nil {
		e.t.Fatal(err)
	}
}

// sparkTable is the record sparkRegister registers (Spark 4.2 +
// delta-spark 4.4.0), built without a *testing.T so that several
// goroutines can register.
func sparkTable(db, name, location string) *hm.Table {
	t := hm.NewTable()
	t.DbName, t.TableName, t.Owner, t.TableType = db, name, "root", "EXTERNAL_TABLE"
	t.PartitionKeys = []*hm.FieldSchema{}
	t.Parameters = map[string]string{
		"EXTERNAL": "TRUE", "spark.sql.create.version": "4.2.0", "spark.sql.partitionProvider": "catalog",
		"spark.sql.sources.provider": "delta", "spark.sql.sources.schema": `{"type":"struct","fields":[]}`,
	}
	sd := hm.NewStorageDescriptor()
	sd.Cols = hms.PlaceholderColumns()
	sd.Location = "file:/tmp/" + db + ".db/" + name + "-__PLACEHOLDER__"
	sd.InputFormat = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	sd.OutputFormat = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	sd.SerdeInfo = &hm.SerDeInfo{SerializationLib: "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
		Parameters: map[string]string{"path": location, "serialization.format": "1"}}
	sd.BucketCols, sd.SortCols, sd.Parameters = []string{}, []*hm.Order{}, map[string]string{}
	t.Sd = sd
	return t
}

// stored reads a table with the plain client.
func (e *hmsEnv) stored(name string) *hm.Table {
	e.t.Helper()
	got, err := e.plain.GetTable(context.Background(), e.db, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return got.Thrift
}

// hiveEdit is another writer's edit as Hive's own client makes it (Spark,
// Delta's catalog hook, Hive DDL): read, change a parameter, alter
// without transient_lastDdlTime, so the server moves it.
func (e *hmsEnv) hiveEdit(name string, params map[string]string) {
	e.t.Helper()
	ctx := context.Background()
	got, err := e.plain.GetTable(ctx, e.db, name)
	if err != nil {
		e.t.Fatal(err)
	}
	next := *got.Thrift
	next.Parameters = maps.Clone(got.Thrift.Parameters)
	maps.Copy(next.Parameters, params)
	delete(next.Parameters, hms.KeyDDLTime)
	if e.fake != nil {
		e.fake.Edit(e.db, name, params)
		return
	}
	// The server's clock has one-second resolution: a moved key needs a
	// new second.
	time.Sleep(1100 * time.Millisecond)
	if err := e.plain.AlterTable(ctx, got, &next, hms.Guard{}); err != nil {
		e.t.Fatal(err)
	}
}

// rawEdit is another writer's edit as a raw Thrift client (or Trino's
// metadata write) makes it: read, change parameters, alter sending
// transient_lastDdlTime back as read, so the server keeps it; it fails
// the test if the key moved anyway.
func (e *hmsEnv) rawEdit(name string, params map[string]string) {
	e.t.Helper()
	ctx := context.Background()
	got, err := e.plain.GetTable(ctx, e.db, name)
	if err != nil {
		e.t.Error(err)
		return
	}
	next := *got.Thrift
	next.Parameters = maps.Clone(got.Thrift.Parameters)
	maps.Copy(next.Parameters, params)
	if err := e.plain.AlterTable(ctx, got, &next, hms.Guard{}); err != nil {
		e.t.Error(err)
		return
	}
	if ddl := e.stored(name).Parameters[hms.KeyDDLTime]; ddl != got.Thrift.Parameters[hms.KeyDDLTime] {
		e.t.Errorf("the raw alter moved %s (%s to %s): the test needs one that keeps it", hms.KeyDDLTime, got.Thrift.Parameters[hms.KeyDDLTime], ddl)
	}
}

func (e *hmsEnv) reconciler(mutate ...func(*sync.Options)) *sync.Reconciler {
	e.t.Helper()
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{"hive." + e.db + ".*"}}})
	if err != nil {
		e.t.Fatal(err)
	}
	pol, err := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(os.TempDir()) + "/**"}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	o := sync.Options{Catalog: hms.NewKind(e.client, hms.KindOptions{LockWait: 2 * time.Second}), Selector: sel, Concurrency: 2, Storage: pol}
	for _, m := range mutate {
		m(&o)
	}
	r, err := sync.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// logTable copies a corpus table to a temp dir: its file:// URL.
func logTable(t *testing.T, src, name string, upTo int64) (dir, url string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), name)
	copyLog(t, src, dir, upTo)
	return dir, "file://" + filepath.ToSlash(dir)
}

func resultOf(t *testing.T, rep *sync.Report, table string) sync.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Table == table {
			return r
		}
	}
	t.Fatalf("no result for %s in %s", table, rep.Summary())
	return sync.Result{}
}

// checkTrue asserts the stored record holds what the log at dir says,
// and kept what was not deltasync's.
func checkTrue(t *testing.T, got *hm.Table, dir, location string) {
	t.Helper()
	snap := snapshot(t, dir)
	md := snap.Metadata
	p := got.Parameters
	schema, ok, err := hms.ReadSchema(p)
	if err != nil || !ok || schema != md.SchemaString {
		t.Errorf("schema = %q (%v, %v), want the log's %q", schema, ok, err, md.SchemaString)
	}
	parts, _ := hms.ReadPartitionColumns(p)
	if len(parts) != len(md.PartitionColumns) || (len(parts) > 0 && parts[0] != md.PartitionColumns[0]) {
		t.Errorf("partition columns = %v, want %v", parts, md.PartitionColumns)
	}
	if p[hms.KeyLastUpdateVersion] != strconv.FormatInt(snap.Version, 10) {
		t.Errorf("%s = %q, want %d", hms.KeyLastUpdateVersion, p[hms.KeyLastUpdateVersion], snap.Version)
	}
	if p[hms.KeyMinReaderVersion] != strconv.Itoa(snap.Protocol.MinReaderVersion) || p[hms.KeyMinWriterVersion] != strconv.Itoa(snap.Protocol.MinWriterVersion) {
		t.Errorf("protocol keys = %s/%s, want %d/%d", p[hms.KeyMinReaderVersion], p[hms.KeyMinWriterVersion], snap.Protocol.MinReaderVersion, snap.Protocol.MinWriterVersion)
	}
	for k, v := range md.Configuration {
		if p[k] != v {
			t.Errorf("log property %s = %q in HMS, want %q", k, p[k], v)
		}
	}
	// Not deltasync's: as Spark registered them.
	for k, v := range map[string]string{"EXTERNAL": "TRUE", "spark.sql.create.version": "4.2.0", "spark.sql.partitionProvider": "catalog", "spark.sql.sources.provider": "delta"} {
		if p[k] != v {
			t.Errorf("%s = %q, want %q (not deltasync's to change)", k, p[k], v)
		}
	}
	if got.Sd.SerdeInfo.Parameters["path"] != location || !hms.IsPlaceholder(got.Sd.Cols) || got.Owner != "root" || got.TableType != "EXTERNAL_TABLE" {
		t.Errorf("serde path %q, cols %v, owner %q, type %q changed", got.Sd.SerdeInfo.Parameters["path"], got.Sd.Cols, got.Owner, got.TableType)
	}
}

// TestHMSOnce: a Delta table Spark registered is synced by one cycle
// (schema, partition columns, log properties, protocol, watermark), the
// Spark and server keys untouched; a second cycle sends nothing and costs
// no per-table call.
func TestHMSOnce(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		dir, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
		e.sparkRegister("ev", loc)
		sdBefore := e.stored("ev").Sd.Location
		r := e.reconciler()
		ctx := context.Background()
		rep := r.Sync(ctx)
		res := resultOf(t, rep, "hive."+e.db+".ev")
		if res.Outcome != sync.OutcomeSynced || res.Status != sync.StatusSynced {
			t.Fatalf("first cycle: %s %s %s", res.Outcome, res.Status, res.Reason)
		}
		got := e.stored("ev")
		checkTrue(t, got, dir, loc)
		if got.Sd.Location != sdBefore {
			t.Errorf("sd.location %q became %q: the placeholder is not deltasync's", sdBefore, got.Sd.Location)
		}
		calls := e.takeCalls()
		if calls["alter_table_with_environment_context"] != 1 {
			t.Errorf("first cycle: calls %v, want one alter", calls)
		}

		rep = r.Sync(ctx)
		res = resultOf(t, rep, "hive."+e.db+".ev")
		if res.Outcome != sync.OutcomeUnchanged || len(res.Actions) != 0 {
			t.Errorf("second cycle: %s %v, want unchanged and nothing sent", res.Outcome, res.Actions)
		}
		calls = e.takeCalls()
		if calls["alter_table_with_environment_context"] != 0 || calls["get_table_req"] != 0 || calls["lock"] != 0 {
			t.Errorf("second cycle calls %v: want no write and no per-table read", calls)
		}
		if calls["get_table_objects_by_name_req"] != 1 || calls["get_all_tables"] != 1 {
			t.Errorf("second cycle calls %v: want one listing and one batch read", calls)
		}
	})
}

// TestHMSAdvance: the log advances (a corpus table copied a version at a
// time); each cycle brings the record to the new version and drops
// Trino's stale column cache, leaving a current one alone.
func TestHMSAdvance(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		dir, loc := logTable(t, "deletion_vectors_disabled", "ev", 1)
		e.sparkRegister("ev", loc)
		r := e.reconciler()
		ctx := context.Background()
		if res := resultOf(t, r.Sync(ctx), "hive."+e.db+".ev"); res.Outcome != sync.OutcomeSynced {
			t.Fatalf("v1: %s %s", res.Outcome, res.Reason)
		}
		e.hiveEdit("ev", map[string]string{hms.KeyTrinoVersion: "1", hms.KeyTrinoSchema: "[cached]", "owner_team": "x"})
		copyLog(t, "deletion_vectors_disabled", dir, -1)
		res := resultOf(t, r.Sync(ctx), "hive."+e.db+".ev")
		if res.Outcome != sync.OutcomeSynced {
			t.Fatalf("advance: %s %s", res.Outcome, res.Reason)
		}
		got := e.stored("ev")
		checkTrue(t, got, dir, loc)
		if _, ok := got.Parameters[hms.KeyTrinoVersion]; ok {
			t.Errorf("Trino's cache of version 1 was kept on a table now at %s", got.Parameters[hms.KeyLastUpdateVersion])
		}
		if got.Parameters["owner_team"] != "x" {
			t.Errorf("another client's parameter owner_team was not kept: %v", got.Parameters)
		}
	})
}

// TestHMSConcurrentEdit: another writer's edit lands between deltasync's
// read (the cycle's batch read) and its write. HMS 4: the guard fails
// and the reconcile reloads and re-plans; HMS 3: the re-read under the
// table lock shows the moved transient_lastDdlTime. Either way the edit
// is kept and the table synced on the second attempt.
func TestHMSConcurrentEdit(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		dir, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
		e.sparkRegister("ev", loc)
		r := e.reconciler()
		var once gosync.Once
		e.mu.Lock()
		e.afterCall = func(op string) {
			if op == "get_table_objects_by_name_req" {
				once.Do(func() { e.hiveEdit("ev", map[string]string{"owner_team": "edited-between"}) })
			}
		}
		e.mu.Unlock()
		syncedKeeping(t, e, r, dir, loc, "edited-between")
	})
}

// syncedKeeping runs a cycle in which another writer edits ev between
// the read and the write (setting owner_team to edit): it must be synced on
// the second attempt, true to the log at dir, with the edit kept.
func syncedKeeping(t *testing.T, e *hmsEnv, r *sync.Reconciler, dir, loc, edit string) {
	t.Helper()
	res := resultOf(t, r.Sync(context.Background()), "hive."+e.db+".ev")
	if res.Outcome != sync.OutcomeSynced || res.Attempts != 2 {
		t.Fatalf("got %s after %d attempts (%s), want synced on the second", res.Outcome, res.Attempts, res.Reason)
	}
	got := e.stored("ev")
	checkTrue(t, got, dir, loc)
	if got.Parameters["owner_team"] != edit {
		t.Errorf("the concurrent edit %q was lost: %v", edit, got.Parameters)
	}
}

// TestHMSCallsPerTable: the steady cycle over N unchanged tables costs
// get_all_databases, get_all_tables and ceil(N/100) batch reads: no call
// per table (counted on the fake; the bound is the client's batching).
func TestHMSCallsPerTable(t *testing.T) {
	e := newHMSEnv(t, "4.0.1", "")
	const n = 250
	_, loc := logTable(t, "basic_partitioned", "base", -1)
	for i := range n {
		e.sparkRegister("t"+strconv.Itoa(i), loc)
	}
	// Every table shares one log: the bound counted is the metastore's.
	r := e.reconciler()
	ctx := context.Background()
	rep := r.Sync(ctx)
	if got := rep.Count(sync.OutcomeSynced); got != n {
		t.Fatalf("first cycle synced %d of %d: %s", got, n, rep.Summary())
	}
	e.takeCalls()
	e.fake.Calls()
	rep = r.Sync(ctx)
	if got := rep.Count(sync.OutcomeUnchanged); got != n {
		t.Fatalf("steady cycle: %d of %d unchanged: %s", got, n, rep.Summary())
	}
	calls := e.fake.Calls()
	want := map[string]int{"get_all_databases": 1, "get_all_tables": 1, "get_table_objects_by_name_req": 3}
	if !maps.Equal(calls, want) {
		t.Errorf("steady cycle over %d tables: calls %v, want %v", n, calls, want)
	}
	total := 0
	for _, c := range calls {
		total += c
	}
	t.Logf("steady cycle: %d metastore calls for %d tables (%.3f per table)", total, n, float64(total)/n)
}

// TestHMSNotDelta: a table whose provider is not delta is reported
// skipped, never read or written.
func TestHMSNotDelta(t *testing.T) {
	e := newHMSEnv(t, "4.0.1", "")
	_, loc := logTable(t, "basic_partitioned", "pq", -1)
	e.sparkRegister("pq", loc)
	e.fake.Edit(e.db, "pq", map[string]string{hms.KeyProvider: "parquet"})
	rep := e.reconciler().Sync(context.Background())
	if len(rep.Skipped) != 1 || rep.Skipped[0].Table != "hive."+e.db+".pq" || len(rep.Results) != 0 {
		t.Fatalf("skipped %v, results %d", rep.Skipped, len(rep.Results))
	}
	if c := e.fake.Calls()["alter_table_with_environment_context"]; c != 0 {
		t.Errorf("%d alters of a parquet table", c)
	}
}

// TestHMSOptions: what a Hive Metastore cannot do is refused when the
// reconciler is built, naming it.
func TestHMSOptions(t *testing.T) {
	e := newHMSEnv(t, "4.0.1", "")
	sel, _ := sync.NewSelector([]sync.Rule{{Include: []string{"*.*.*"}}})
	for name, o := range map[string]sync.Options{
		"vended":  {Catalog: hms.NewKind(e.client, hms.KindOptions{}), Selector: sel, VendedCredentials: true},
		"neither": {Selector: sel},
	} {
		if _, err := sync.New(o); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	_ = errors.New
}

// TestHMSSameSecondEditUnderLock: on HMS 3 the write's conflict check
// runs under the table lock. Another writer's edit between the cycle's
// read and the lock that leaves transient_lastDdlTime as it was (a write
// in the same second: the key has one-second resolution) is a conflict
// too, re-planned, and the edit kept. Played on the fake HMS 3, where an
// alter that carries the key keeps it.
func TestHMSSameSecondEditUnderLock(t *testing.T) {
	e := newHMSEnv(t, "3.0", "")
	dir, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
	e.sparkRegister("ev", loc)
	r := e.reconciler()
	var once gosync.Once
	e.mu.Lock()
	e.afterCall = func(op string) {
		if op != "get_table_objects_by_name_req" {
			return
		}
		once.Do(func() { e.rawEdit("ev", map[string]string{"owner_team": "same-second"}) })
	}
	e.mu.Unlock()
	syncedKeeping(t, e, r, dir, loc, "same-second")
}
