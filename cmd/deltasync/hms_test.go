package main

import (
	"path/filepath"
	"strings"
	"testing"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestHMSPlanOnce: catalog.url thrift:// selects the Hive Metastore kind;
// plan reports the Spark-registered table's drift and writes nothing,
// once syncs it, and a second once sends nothing.
func TestHMSPlanOnce(t *testing.T) {
	srv := fakehms.New(t, "4.0.1")
	dir := filepath.Join(t.TempDir(), "ev")
	testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), "basic_partitioned"), dir, func(string) bool { return true })
	tbl := hm.NewTable()
	tbl.DbName, tbl.TableName, tbl.TableType = "sales", "ev", "EXTERNAL_TABLE"
	tbl.Parameters = map[string]string{"EXTERNAL": "TRUE", hms.KeyProvider: "delta", hms.KeySchema: `{"type":"struct","fields":[]}`}
	tbl.Sd = &hm.StorageDescriptor{Cols: hms.PlaceholderColumns(), Location: "file:/wh/sales.db/ev-__PLACEHOLDER__",
		SerdeInfo: &hm.SerDeInfo{Parameters: map[string]string{"path": "file://" + filepath.ToSlash(dir)}}}
	srv.Put(tbl)
	cfg := writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "`+srv.URL+`", name: lake}
tables: [{include: ["lake.sales.*"]}]
storage: {allowed_locations: ["file://`+filepath.ToSlash(filepath.Dir(dir))+`/**"]}
`)
	code, out, errOut := runCLI(t, nil, "plan", "--config", cfg)
	if code != 2 || !strings.Contains(out, "lake.sales.ev") {
		t.Fatalf("plan: exit %d (want 2: drift)\n%s\n%s", code, out, errOut)
	}
	if n := srv.Calls()["alter_table_with_environment_context"]; n != 0 {
		t.Fatalf("plan sent %d alters", n)
	}
	code, out, errOut = runCLI(t, nil, "once", "--config", cfg)
	if code != 0 || !strings.Contains(out, "synced") {
		t.Fatalf("once: exit %d\n%s\n%s", code, out, errOut)
	}
	got := srv.Table("sales", "ev")
	if got.Parameters[hms.KeyLastUpdateVersion] != "1" || got.Parameters[hms.KeyNumPartCols] != "1" {
		t.Errorf("after once: %v", got.Parameters)
	}
	srv.Calls()
	code, out, errOut = runCLI(t, nil, "once", "--config", cfg)
	if code != 0 || srv.Calls()["alter_table_with_environment_context"] != 0 {
		t.Fatalf("second once: exit %d, or it wrote\n%s\n%s", code, out, errOut)
	}
}

// TestHMSConfigErrors: what a thrift:// catalog cannot take is named.
func TestHMSConfigErrors(t *testing.T) {
	tok := writeFile(t, t.TempDir(), "tok", "x")
	cfg := writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "thrift://127.0.0.1:1", token_file: "`+tok+`", columns: wide, name: "a.b"}
credentials: vended
tables: [{include: ["hive.*.*"]}]
`)
	code, _, errOut := runCLI(t, nil, "check-config", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{"catalog.token_file: Unity Catalog's", `catalog.columns "wide": want placeholder or real`,
		`catalog.name "a.b"`, "credentials: vended: a Hive Metastore vends no credentials"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check-config does not say %q:\n%s", want, errOut)
		}
	}
	cfg = writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "http://c/api/2.1/unity-catalog", name: hive}
tables: [{include: ["a.*.*"]}]
`)
	if _, _, errOut = runCLI(t, nil, "check-config", "--config", cfg); !strings.Contains(errOut, "catalog.name: only for a Hive Metastore") {
		t.Errorf("catalog.name with Unity Catalog not refused:\n%s", errOut)
	}
}
