package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
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
	client *catalog.Client
}

func newTestCatalog(t *testing.T) *testCatalog {
	t.Helper()
	srv := spectest.NewForTest(t)
	srv.AddCatalog("cat")
	srv.AddSchema("cat", "s")
	c, err := catalog.New(srv.URL(), catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &testCatalog{t: t, srv: srv, client: c}
}

// register copies a corpus table and registers it in sync as cat.s.<name>.
func (tc *testCatalog) register(src, name string) string {
	tc.t.Helper()
	dir := filepath.Join(tc.t.TempDir(), name)
	root := filepath.Join(testcorpus.Dir(tc.t), src)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, in)
		return errorsJoin(err, f.Close())
	})
	if err != nil {
		tc.t.Fatal(err)
	}
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
	if _, err := sync.Register(ctx, tc.client, snap, n, "file://"+dir); err != nil {
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

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func TestEnvName(t *testing.T) {
	if got := envName("catalog-url"); got != "DELTASYNC_CATALOG_URL" {
		t.Errorf("envName = %q", got)
	}
}
