package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/deltasync/deltasync/sync"
)

// testCatalog is a uctest server with catalog "cat" and schema "s".
type testCatalog struct {
	t      *testing.T
	srv    *uctest.Server
	client *uc.Client
}

func newTestCatalog(t *testing.T) *testCatalog {
	t.Helper()
	srv := spectest.NewForTest(t)
	srv.AddCatalog("cat")
	srv.AddSchema("cat", "s")
	c, err := uc.New(srv.URL(), uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &testCatalog{t: t, srv: srv, client: c}
}

// register copies a corpus table and registers it in sync as cat.s.<name>.
func (tc *testCatalog) register(src, name string) string {
	tc.t.Helper()
	dir := filepath.Join(tc.t.TempDir(), name)
	testcorpus.CopyTree(tc.t, filepath.Join(testcorpus.Dir(tc.t), src), dir, nil)
	ctx := context.Background()
	tbl, err := deltalog.Open(ctx, "file://"+dir)
	if err != nil {
		tc.t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		tc.t.Fatal(err)
	}
	n := catalog.TableName{Catalog: "cat", Schema: "s", Table: name}
	if _, err := sync.Register(ctx, kindOf(tc.client), snap, n, "file://"+dir); err != nil {
		tc.t.Fatal(err)
	}
	return dir
}

func (tc *testCatalog) mutate(name string, fn func(*uctest.Table)) {
	tc.t.Helper()
	if err := tc.srv.MutateTable("cat.s."+name, fn); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *testCatalog) updates() int {
	n := 0
	for _, r := range tc.srv.Requests() {
		if r.Method == "POST" && strings.Contains(r.Path, "/delta/v1/") && !strings.HasSuffix(r.Path, "/tables") {
			n++
		}
	}
	return n
}

func TestEnvName(t *testing.T) {
	if got := envName("catalog-url"); got != "DELTASYNC_CATALOG_URL" {
		t.Errorf("envName = %q", got)
	}
}
