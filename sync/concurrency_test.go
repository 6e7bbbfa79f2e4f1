package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
)

// peakCounter counts what is in flight at once, by key: the distinct keys
// with a request in flight, at their peak.
type peakCounter struct {
	mu   stdsync.Mutex
	cur  map[string]int
	peak int
}

func (p *peakCounter) enter(key string) func() {
	p.mu.Lock()
	if p.cur == nil {
		p.cur = map[string]int{}
	}
	p.cur[key]++
	p.peak = max(p.peak, len(p.cur))
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		if p.cur[key]--; p.cur[key] == 0 {
			delete(p.cur, key)
		}
		p.mu.Unlock()
	}
}

func (p *peakCounter) max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// TestFullReadsOutnumberCatalogTurns: a cycle reads up to
// ReadConcurrency tables' logs at once, while at most Concurrency of its
// reconciles have a catalog request in flight. Storage requests take 10 ms
// at the S3 server and catalog requests 5 ms, so a reconcile spends most of
// its time on storage round trips, as it does on an object store.
func TestFullReadsOutnumberCatalogTurns(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIADELTASYNCDAEMON1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "daemon-secret-key")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	storage := &peakCounter{}
	backend := s3mem.New()
	s3 := gofakes3.New(backend).Server()
	s3srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /lake/wh/tN/_delta_log/...: the table is the third element
		if parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 4); len(parts) >= 3 && r.Method == http.MethodGet {
			defer storage.enter(parts[2])()
			time.Sleep(10 * time.Millisecond)
		} else if r.Method == http.MethodGet && r.URL.Query().Get("prefix") != "" {
			p := strings.SplitN(r.URL.Query().Get("prefix"), "/", 3)
			if len(p) >= 2 {
				defer storage.enter(p[1])()
			}
			time.Sleep(10 * time.Millisecond)
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(s3srv.Close)
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	lake := map[string]string{"endpoint": s3srv.URL, "use_path_style": "true", "region": "us-east-1", "disable_https": "true"}

	e := newEnvAt(t, "") // the in-memory server: the latency below is the test's
	e.allowed = []string{"s3://lake/wh/**"}
	e.buckets = []sync.BucketOptions{{Location: "s3://lake", Options: lake}}
	src := filepath.Join(t.TempDir(), "src")
	copyLog(t, "basic_partitioned", src, -1)
	const tables = 16
	for i := range tables {
		loc := fmt.Sprintf("s3://lake/wh/t%d", i)
		uploadDir(t, loc+"?endpoint="+s3srv.URL+"&use_path_style=true&region=us-east-1&disable_https=true", src)
		if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, src), e.name(fmt.Sprintf("t%d", i)), loc); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct{ concurrency, reads int }{{2, 8}, {2, 2}} {
		t.Run(fmt.Sprintf("concurrency %d, read_concurrency %d", tc.concurrency, tc.reads), func(t *testing.T) {
			cat := &peakCounter{}
			hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				// a table's own requests (loadTable, getTable, updates), not the listing's pages
				if seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/"); seg[len(seg)-1] != "tables" {
					defer cat.enter(r.URL.Path)()
				}
				time.Sleep(5 * time.Millisecond)
				return http.DefaultTransport.RoundTrip(r)
			})}
			c, err := uc.New(e.client.BaseURL(), uc.Options{HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			storage.mu.Lock()
			storage.peak = 0
			storage.mu.Unlock()
			r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}, func(o *sync.Options) {
				o.Catalog, o.Concurrency, o.ReadConcurrency = kindOf(c), tc.concurrency, tc.reads
			})
			rep := r.Sync(context.Background())
			if len(rep.Results) != tables {
				t.Fatalf("%d results, want %d: %+v", len(rep.Results), tables, rep.Results)
			}
			for _, res := range rep.Results {
				if res.Outcome != sync.OutcomeUnchanged {
					t.Errorf("%s: %s (%s), want unchanged", res.Table, res.Outcome, res.Reason)
				}
			}
			if got := cat.max(); got > tc.concurrency {
				t.Errorf("%d tables had a catalog request in flight at once, want at most concurrency %d", got, tc.concurrency)
			}
			got := storage.max()
			if got > tc.reads {
				t.Errorf("%d tables were read at once, want at most read_concurrency %d", got, tc.reads)
			}
			if tc.reads > tc.concurrency && got <= tc.concurrency {
				t.Errorf("%d tables were read at once: no more than concurrency %d, although read_concurrency is %d", got, tc.concurrency, tc.reads)
			}
			t.Logf("peak: %d tables reading storage, %d with a catalog request", got, cat.max())
		})
	}
}
