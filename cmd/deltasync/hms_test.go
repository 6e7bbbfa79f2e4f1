package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/internal/testenv"
)

// TestHMSPlanOnce: catalog.url thrift:// selects the Hive Metastore kind;
// plan reports the Spark-registered table's drift and writes nothing,
// once syncs it, and a second once sends nothing.
func TestHMSPlanOnce(t *testing.T) {
	srv, cfg := hmsSparkTable(t)
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

// TestHMSPlanOutApply: on a Hive Metastore, plan --out writes a saved
// plan and sends nothing; apply sends exactly it (one alter, audited)
// and exits 0; applied again it is stale (exit 1, nothing sent); a config
// naming another metastore refuses the plan whole.
func TestHMSPlanOutApply(t *testing.T) {
	srv, cfg := hmsSparkTable(t)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	code, out, errOut := runCLI(t, nil, "plan", "--config", cfg, "--out", planFile)
	if code != 2 {
		t.Fatalf("plan --out: exit %d (want 2: drift)\n%s\n%s", code, out, errOut)
	}
	if n := srv.Calls()["alter_table_with_environment_context"]; n != 0 {
		t.Fatalf("plan --out sent %d alters", n)
	}
	b, err := os.ReadFile(planFile)
	if err != nil || !strings.Contains(string(b), `"catalog_kind": "hive-metastore"`) || !strings.Contains(string(b), `"lake.sales.ev"`) {
		t.Fatalf("saved plan (%v):\n%s", err, b)
	}
	c, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, t.TempDir(), "o.yaml", strings.Replace(string(c), srv.URL, "thrift://127.0.0.1:1", 1))
	if code, _, errOut := runCLI(t, nil, "apply", planFile, "--config", other); code != 1 || !strings.Contains(errOut, "the plan was made for catalog") {
		t.Errorf("apply against another metastore: exit %d\n%s", code, errOut)
	}
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	code, out, errOut = runCLI(t, nil, "apply", planFile, "--config", cfg, "--audit-file", auditFile)
	if code != 0 || !strings.Contains(out, "lake.sales.ev: applied") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := srv.Calls()["alter_table_with_environment_context"]; n != 1 {
		t.Errorf("apply sent %d alters, want 1", n)
	}
	if got := srv.Table("sales", "ev"); got.Parameters[hms.KeyLastUpdateVersion] != "1" || got.Parameters[hms.KeyNumPartCols] != "1" {
		t.Errorf("after apply: %v", got.Parameters)
	}
	if a, err := os.ReadFile(auditFile); err != nil || !strings.Contains(string(a), `"command":"apply"`) || !strings.Contains(string(a), `"outcome":"synced"`) {
		t.Errorf("audit trail (%v):\n%s", err, a)
	}
	code, out, errOut = runCLI(t, nil, "apply", planFile, "--config", cfg)
	if code != 1 || !strings.Contains(out, "stale") || srv.Calls()["alter_table_with_environment_context"] != 0 {
		t.Errorf("second apply: exit %d, want 1 (stale) and nothing sent\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, nil, "once", "--config", cfg); code != 0 || srv.Calls()["alter_table_with_environment_context"] != 0 {
		t.Errorf("once after apply: exit %d, or it wrote\n%s\n%s", code, out, errOut)
	}
}

// TestHMSCommandsCloseConnections: plan, apply, once and run (at
// shutdown) against a metastore leave no connection open when they return
// (closeCatalog): the fake counts the connections it accepted and has
// seen closed. Each command must have opened one, or there is nothing to
// assert. The garbage collector is off for the test: a leaked connection's
// file is otherwise closed by its finalizer whenever a collection finds
// the client unreachable, which would let a leak pass.
func TestHMSCommandsCloseConnections(t *testing.T) {
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc) })
	srv, cfg := hmsSparkTable(t)
	accepted := 0
	closed := func(cmd string) {
		t.Helper()
		n := srv.WaitConnsClosed(t, 2*time.Second)
		if n == accepted {
			t.Errorf("%s opened no connection to the metastore: nothing asserted", cmd)
		}
		accepted = n
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if code, out, errOut := runCLI(t, nil, "plan", "--config", cfg, "--out", planFile); code != 2 {
		t.Fatalf("plan: exit %d (want 2: drift)\n%s\n%s", code, out, errOut)
	}
	closed("plan")
	if code, out, errOut := runCLI(t, nil, "apply", planFile, "--config", cfg); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	closed("apply")
	if code, out, errOut := runCLI(t, nil, "once", "--config", cfg); code != 0 {
		t.Fatalf("once: exit %d\n%s\n%s", code, out, errOut)
	}
	closed("once")

	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"run", "--config", cfg, "--listen", addr, "--schedule", "@every 1s", "--log-level", "error"}, nil, io.Discard, io.Discard)
	}()
	ready := false
	for range 400 { // bounded poll for the first cycle, not a timing assertion
		if code, _ := runGet(t, "http://"+addr+"/readyz"); code == http.StatusOK {
			ready = true
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 || !ready {
		t.Fatalf("run: exit %d after cancel (want 0), ready %v", code, ready)
	}
	closed("run")
}

// hmsSparkTable is a fake HMS 4 with one table as Spark registers it
// (sales.ev, a partitioned Delta table at version 1), and a config
// naming the metastore lake.
func hmsSparkTable(t *testing.T) (*fakehms.Server, string) {
	t.Helper()
	srv := fakehms.New(t, "4.0.1")
	dir := filepath.Join(t.TempDir(), "ev")
	testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), "basic_partitioned"), dir, func(string) bool { return true })
	tbl := hm.NewTable()
	tbl.DbName, tbl.TableName, tbl.TableType = "sales", "ev", "EXTERNAL_TABLE"
	tbl.Parameters = map[string]string{"EXTERNAL": "TRUE", hms.KeyProvider: "delta", hms.KeySchema: `{"type":"struct","fields":[]}`}
	tbl.Sd = &hm.StorageDescriptor{Cols: hms.PlaceholderColumns(), Location: "file:/wh/sales.db/ev-__PLACEHOLDER__",
		SerdeInfo: &hm.SerDeInfo{Parameters: map[string]string{"path": "file://" + filepath.ToSlash(dir)}}}
	srv.Put(tbl)
	return srv, writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "`+srv.URL+`", name: lake}
tables: [{include: ["lake.sales.*"]}]
storage: {allowed_locations: ["file://`+filepath.ToSlash(filepath.Dir(dir))+`/**"]}
`)
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
