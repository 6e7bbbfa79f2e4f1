package sync_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
)

// gateTransport holds the listing of schema s2 until some table has been
// loaded (or a timeout passes, then it records that it had to give up).
type gateTransport struct {
	loaded chan struct{}
	once   stdsync.Once
	gaveUp bool // written by the lister, which runs in Sync's goroutine
	base   http.RoundTripper
}

func (g *gateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case strings.Contains(r.URL.Path, "/delta/v1/catalogs/") && r.Method == http.MethodGet:
		g.once.Do(func() { close(g.loaded) })
	case strings.HasSuffix(r.URL.Path, "/tables") && r.URL.Query().Get("schema_name") == "s2":
		select {
		case <-g.loaded:
		case <-time.After(10 * time.Second):
			g.gaveUp = true
		}
	}
	return g.base.RoundTrip(r)
}

// TestListingStreamsIntoWorkers: tables of the first listed schema are
// reconciled while later schemas are still being listed, not after the
// whole catalog is listed.
func TestListingStreamsIntoWorkers(t *testing.T) {
	e := uctestEnv(t)
	ctx := context.Background()
	e.srv.AddSchema(e.catalog, "s2")
	e.register("basic_partitioned", "a", -1)
	dir := filepath.Join(t.TempDir(), "b")
	copyLog(t, "basic_partitioned", dir, -1)
	name := catalog.TableName{Catalog: e.catalog, Schema: "s2", Table: "b"}
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), name, "file://"+dir); err != nil {
		t.Fatal(err)
	}
	gate := &gateTransport{loaded: make(chan struct{}), base: http.DefaultTransport}
	c, err := uc.New(e.client.BaseURL(), uc.Options{HTTPClient: &http.Client{Transport: gate}})
	if err != nil {
		t.Fatal(err)
	}
	rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}, func(o *sync.Options) {
		o.Catalog, o.Concurrency = kindOf(c), 1 // one worker: the lister alone fetches s2
	})
	rep := rec.Sync(ctx)
	if rep.Failed() || len(rep.Results) != 2 {
		t.Fatalf("%s\n%s", rep.Summary(), reportText(rep))
	}
	if gate.gaveUp {
		t.Error("no table was loaded before the second schema was listed: the listing does not stream into the workers")
	}
	if rep.Results[0].Table > rep.Results[1].Table {
		t.Errorf("results not sorted by table: %s, %s", rep.Results[0].Table, rep.Results[1].Table)
	}
}
