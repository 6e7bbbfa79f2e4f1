package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/kindtest"
)

// exitKind is one catalog kind the exit-code test runs plan and once
// against: its URL, the catalog.schema its tables are in, and how its own
// writers register a table (UC: createTable in sync with the log; HMS:
// Spark's registration, no Delta state).
type exitKind struct {
	url      string
	prefix   string
	register func(t *testing.T, name, dir string)
}

// exitKinds is the per-kind wiring: uctest, the real Unity Catalog
// server and the real Hive Metastore 4.0.1 and 3.1.3 (a real server that
// is not set up skips, or fails under DELTASYNC_REQUIRE_EXTERNAL=1).
func exitKinds() []struct {
	name string
	make func(*testing.T) exitKind
} {
	return []struct {
		name string
		make func(*testing.T) exitKind
	}{
		{"uctest", func(t *testing.T) exitKind {
			srv := spectest.NewForTest(t)
			srv.AddCatalog("cat")
			srv.AddSchema("cat", "s")
			return ucExitKind(t, srv.URL(), "cat")
		}},
		{"uc", func(t *testing.T) exitKind {
			url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC, "DELTASYNC_UC_URL is unset: no real Unity Catalog server (.ci/setup-uc.sh)")
			c, err := uc.New(url, uc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			name := "deltasync_exit_" + randomHex()
			if _, err := c.CreateCatalog(context.Background(), uc.CreateCatalogRequest{Name: name}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.DeleteCatalog(context.Background(), name, true) })
			if _, err := c.CreateSchema(context.Background(), uc.CreateSchemaRequest{Name: "s", CatalogName: name}); err != nil {
				t.Fatal(err)
			}
			return ucExitKind(t, url, name)
		}},
		{"hms4", func(t *testing.T) exitKind { return hmsExitKind(t, "DELTASYNC_HMS4_URL") }},
		{"hms3", func(t *testing.T) exitKind { return hmsExitKind(t, "DELTASYNC_HMS3_URL") }},
		// Glue: moto behind internal/fakeglue (glue_test.go).
		{"glue", glueExitKind},
	}
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func ucExitKind(t *testing.T, url, cat string) exitKind {
	t.Helper()
	c, err := uc.New(url, uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return exitKind{url: url, prefix: cat + ".s", register: func(t *testing.T, name, dir string) {
		t.Helper()
		ctx := context.Background()
		tbl, err := deltalog.Open(ctx, "file://"+dir)
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sync.Register(ctx, kindOf(c), snap, catalog.TableName{Catalog: cat, Schema: "s", Table: name}, "file://"+dir); err != nil {
			t.Fatal(err)
		}
	}}
}

func hmsExitKind(t *testing.T, env string) exitKind {
	t.Helper()
	url := testenv.Getenv(t, env, testenv.External, env+" is unset: no real Hive Metastore (start one with `DELTASYNC_CACHE=.cache bash .ci/setup-hms.sh start`)")
	c, err := hms.New(url, hms.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	db := "ds_exit_" + randomHex()
	if err := c.CreateDatabase(context.Background(), db, "file://"+t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DropDatabase(context.Background(), db, true) })
	return exitKind{url: url, prefix: hms.DefaultKindName + "." + db, register: func(t *testing.T, name, dir string) {
		t.Helper()
		tbl := hm.NewTable()
		tbl.DbName, tbl.TableName, tbl.Owner, tbl.TableType = db, name, "root", "EXTERNAL_TABLE"
		tbl.PartitionKeys = []*hm.FieldSchema{}
		tbl.Parameters = map[string]string{"EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta",
			"spark.sql.sources.schema": `{"type":"struct","fields":[]}`}
		sd := hm.NewStorageDescriptor()
		sd.Cols = hms.PlaceholderColumns()
		sd.Location = "file:/tmp/" + db + ".db/" + name + "-__PLACEHOLDER__"
		sd.InputFormat = "org.apache.hadoop.mapred.SequenceFileInputFormat"
		sd.OutputFormat = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
		sd.SerdeInfo = &hm.SerDeInfo{SerializationLib: "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
			Parameters: map[string]string{"path": "file://" + dir, "serialization.format": "1"}}
		sd.BucketCols, sd.SortCols, sd.Parameters = []string{}, []*hm.Order{}, map[string]string{}
		tbl.Sd = sd
		if err := c.CreateExternalTable(context.Background(), tbl); err != nil {
			t.Fatal(err)
		}
	}}
}

// TestExitCodesEveryKind: plan and once exit the same on every kind: 2
// for drift (plan: found, nothing written; once: left on a watch-only
// table), 0 in sync (once after syncing, plan after once), and 1 when a
// table fails (one named explicitly that the catalog does not have).
func TestExitCodesEveryKind(t *testing.T) {
	for _, k := range exitKinds() {
		t.Run(k.name, func(t *testing.T) {
			kind := k.make(t)
			dir := filepath.Join(t.TempDir(), "ex")
			kindtest.Commit(t, dir, 0, kindtest.Schema, map[string]string{kindtest.Retention: "interval 30 days"})
			kind.register(t, "ex", dir)
			kindtest.Commit(t, dir, 1, kindtest.Schema, map[string]string{kindtest.Retention: "interval 60 days"})
			table := kind.prefix + ".ex"
			cli := func(cmd string, extra ...string) (int, string) {
				t.Helper()
				args := append([]string{cmd, "--catalog-url", kind.url, "--include", table, "--log-level", "error", "--allow-location", allowTemp()}, extra...)
				code, out, errOut := runCLI(t, nil, args...)
				return code, out + errOut
			}
			expect := func(step string, want int, code int, out string) {
				t.Helper()
				if code != want {
					t.Errorf("%s: exit %d, want %d\n%s", step, code, want, out)
				}
			}
			code, out := cli("plan")
			expect("plan with drift", 2, code, out)
			code, out = cli("plan")
			expect("plan again (plan wrote nothing)", 2, code, out)
			code, out = cli("once")
			expect("once syncing the drift", 0, code, out)
			if !strings.Contains(out, "1 synced") {
				t.Errorf("once: no table synced:\n%s", out)
			}
			code, out = cli("plan")
			expect("plan in sync", 0, code, out)
			code, out = cli("once")
			expect("once in sync", 0, code, out)

			kindtest.Commit(t, dir, 2, kindtest.Schema, map[string]string{kindtest.Retention: "interval 90 days"})
			code, out = cli("once", "--mode", "warn")
			expect("once with drift on a watch-only table", 2, code, out)
			code, out = cli("plan", "--mode", "warn")
			expect("plan with drift on a watch-only table", 2, code, out)

			// A table named explicitly that the catalog does not have fails.
			missing := []string{"--include", kind.prefix + ".missing"}
			code, out = cli("plan", missing...)
			expect("plan of a table the catalog does not have", 1, code, out)
			code, out = cli("once", missing...)
			expect("once of a table the catalog does not have", 1, code, out)
			if !strings.Contains(out, "1 failed") {
				t.Errorf("once: the missing table did not fail:\n%s", out)
			}
		})
	}
}

// TestOpenLineageNamesEveryKindsCatalog: a change event's catalog facet
// names the catalog as the kind's tables are named (Unity Catalog: unity;
// a Hive Metastore: hive; Glue: awsdatacatalog), when catalog.name does
// not say otherwise. It failed for Glue, which was reported as unity.
func TestOpenLineageNamesEveryKindsCatalog(t *testing.T) {
	want := map[string]string{"uctest": "unity", "uc": "unity", "hms4": "hive", "hms3": "hive", "glue": "awsdatacatalog"}
	for _, k := range exitKinds() {
		t.Run(k.name, func(t *testing.T) {
			kind := k.make(t)
			dir := filepath.Join(t.TempDir(), "ol")
			kindtest.Commit(t, dir, 0, kindtest.Schema, map[string]string{kindtest.Retention: "interval 30 days"})
			kind.register(t, "ol", dir)
			kindtest.Commit(t, dir, 1, kindtest.Schema, map[string]string{kindtest.Retention: "interval 60 days"})
			var mu stdsync.Mutex
			var bodies []string
			sink := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				bodies = append(bodies, string(b))
			}))
			defer sink.Close()
			cfg := writeFile(t, t.TempDir(), "notify.yaml", "notify:\n  openlineage: {url: \""+sink.URL+"\"}\n")
			args := []string{"once", "--config", cfg, "--catalog-url", kind.url, "--include", kind.prefix + ".ol", "--log-level", "error", "--allow-location", allowTemp()}
			if code, out, errOut := runCLI(t, nil, args...); code != 0 {
				t.Fatalf("once: exit %d\n%s\n%s", code, out, errOut)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 1 {
				t.Fatalf("%d OpenLineage events, want 1: %q", len(bodies), bodies)
			}
			var ev struct {
				Outputs []struct {
					Facets struct {
						Catalog struct{ Name, Type string } `json:"catalog"`
					} `json:"facets"`
				} `json:"outputs"`
			}
			if err := json.Unmarshal([]byte(bodies[0]), &ev); err != nil || len(ev.Outputs) != 1 {
				t.Fatalf("OpenLineage event %s: %v", bodies[0], err)
			}
			if got := ev.Outputs[0].Facets.Catalog; got.Name != want[k.name] {
				t.Errorf("catalog facet %+v: want name %q", got, want[k.name])
			}
		})
	}
}
