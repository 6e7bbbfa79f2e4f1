package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestHMSRegisterOnce: register rules work with catalog.url thrift://
// (once refused at start-up): plan shows the table as would register and
// creates nothing, once creates it in the metastore as Spark registers a
// Delta EXTERNAL table, with register.create_schemas creating its
// database, and a second once sends nothing.
func TestHMSRegisterOnce(t *testing.T) {
	srv := fakehms.New(t, "4.0.1")
	lake := t.TempDir()
	dir := filepath.Join(lake, "sales", "ev")
	testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), "basic_partitioned"), dir, func(string) bool { return true })
	cfg := writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "`+srv.URL+`", name: lake}
register:
  create_schemas: true
  rules:
    - location: 'file://`+filepath.ToSlash(lake)+`/{schema}/{table}'
      name: 'lake.{schema}.{table}'
storage: {allowed_locations: ["file://`+filepath.ToSlash(lake)+`/**"]}
`)
	code, out, errOut := runCLI(t, nil, "plan", "--config", cfg)
	if code != 2 || !strings.Contains(out, "lake.sales.ev (EXTERNAL, sync): would register") {
		t.Fatalf("plan: exit %d (want 2)\n%s\n%s", code, out, errOut)
	}
	if c := srv.Calls(); c["create_table"]+c["create_database"] != 0 {
		t.Fatalf("plan wrote: %v", c)
	}
	code, out, errOut = runCLI(t, nil, "once", "--config", cfg)
	if code != 0 || !strings.Contains(out, "1 registered") {
		t.Fatalf("once: exit %d\n%s\n%s", code, out, errOut)
	}
	got := srv.Table("sales", "ev")
	if got == nil || got.Parameters["EXTERNAL"] != "TRUE" || got.Parameters[hms.KeyProvider] != "delta" ||
		got.Sd.SerdeInfo.Parameters[hms.SerdePath] != "file://"+filepath.ToSlash(dir) || got.Parameters[hms.KeyLastUpdateVersion] != "1" {
		t.Fatalf("registered record: %+v", got)
	}
	srv.Calls()
	code, out, errOut = runCLI(t, nil, "once", "--config", cfg)
	if c := srv.Calls(); code != 0 || c["create_table"]+c["alter_table_with_environment_context"] != 0 {
		t.Fatalf("second once: exit %d, calls %v\n%s\n%s", code, c, out, errOut)
	}
}
