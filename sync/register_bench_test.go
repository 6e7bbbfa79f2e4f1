package sync_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/fakes3"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// BenchmarkRegisterS3 discovers and registers N tables (default 10,000;
// DELTASYNC_BENCH_REGISTER_TABLES) under s3://lake/w/{schema}/{table} (10
// schemas) on gofakes3 with the indexed backend, against the in-memory
// catalog (uctest), then runs steady cycles once all are registered. It
// reports the first cycle's wall time and requests, and a steady cycle's.
//
//	go test ./sync -run '^$' -bench BenchmarkRegisterS3 -benchtime 1x
func BenchmarkRegisterS3(b *testing.B) {
	n := 10000
	if v := os.Getenv("DELTASYNC_BENCH_REGISTER_TABLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	const schemas = 10
	backend := fakes3.NewIndexed()
	if err := backend.CreateBucket("lake"); err != nil {
		b.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	defer s3.Close()
	b.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	commit := []byte(`{"commitInfo":{"timestamp":1700000000000,"operation":"CREATE TABLE"}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"6a0f1c84-1f1e-4a55-9a3c-4b6a1d1e0b21","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"v\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":1700000000000}}
`)
	for i := range n {
		key := fmt.Sprintf("w/s%d/t%05d/_delta_log/%020d.json", i%schemas, i, 0)
		if _, err := backend.PutObject("lake", key, map[string]string{}, bytes.NewReader(commit), int64(len(commit)), nil); err != nil {
			b.Fatal(err)
		}
	}
	opts := map[string]string{"endpoint": s3.URL, "region": "us-east-1", "use_path_style": "true", "disable_https": "true"}
	pol, err := sync.NewStoragePolicy([]string{"s3://lake/w/**"}, []sync.BucketOptions{{Location: "s3://lake", Options: opts}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		srv := uctest.NewServer()
		srv.AddCatalog("main")
		for s := range schemas {
			srv.AddSchema("main", fmt.Sprintf("s%d", s))
		}
		c := newRegisterCounter()
		cl, err := uc.New(srv.URL(), uc.Options{Observer: c.observeCatalog})
		if err != nil {
			b.Fatal(err)
		}
		sel, _ := sync.NewSelector(nil)
		r, err := sync.New(sync.Options{Catalog: kindOf(cl), Selector: sel, Storage: pol, Concurrency: 16, ResyncInterval: time.Hour,
			LogOptions: []deltalog.Option{deltalog.WithConcurrentObserver(c.observeStorage)},
			Register:   &register.Options{Rules: []register.Rule{{Location: "s3://lake/w/{schema}/{table}", Name: "main.{schema}.{table}"}}}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		start := time.Now()
		rep := r.Sync(ctx)
		first := time.Since(start)
		if got := rep.Counts().Registered; got != n {
			b.Fatalf("registered %d of %d: %s", got, n, rep.Summary())
		}
		b.ReportMetric(first.Seconds(), "register-s")
		b.ReportMetric(float64(c.get(c.storage, "list")), "register-lists")
		b.ReportMetric(float64(c.get(c.storage, "get")), "register-gets")
		b.ReportMetric(float64(c.get(c.catalog, "createTable")+c.get(c.catalog, "updateTable")), "register-writes")
		r.Sync(ctx) // the first full reconcile of each, verifying it for the fast path
		c.reset()
		start = time.Now()
		rep = r.Sync(ctx)
		steady := time.Since(start)
		if rep.Counts().Unchanged != n || len(c.writes()) != 0 {
			b.Fatalf("steady cycle: %s, writes %v", rep.Summary(), c.writes())
		}
		var catalogReqs int
		c.mu.Lock()
		for _, v := range c.catalog {
			catalogReqs += v
		}
		c.mu.Unlock()
		b.ReportMetric(steady.Seconds(), "steady-s")
		b.ReportMetric(float64(c.get(c.storage, "list")), "steady-lists")
		b.ReportMetric(float64(c.get(c.storage, "get")), "steady-gets")
		b.ReportMetric(float64(catalogReqs), "steady-catalog-reqs")
		r.Close()
		srv.Close()
	}
}
