package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// endlessListings is a proxy in front of a catalog that answers the
// classic listings named in endless ("catalogs", "schemas", "tables")
// itself, with a new page token on every page, and forwards the rest.
// After 5,000 listing requests it ends them, so a client without a bound
// fails the test instead of hanging it.
func endlessListings(t *testing.T, upstream string, endless ...string) (base string, listings *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	listings = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, what := range endless {
			if r.Method == http.MethodGet && r.URL.Path == u.Path+"/"+what {
				n := listings.Add(1)
				w.Header().Set("Content-Type", "application/json")
				if n > 5000 {
					fmt.Fprintf(w, `{%q:[]}`, what)
					return
				}
				fmt.Fprintf(w, `{%q:[],"next_page_token":"endless-%d"}`, what, n)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path, listings
}

// TestNamedTablesRunWhenTheListingNeverEnds: a catalog whose listing never
// ends (a new page token on every page) costs a bounded number of requests
// and is reported, and the tables the configuration names one by one are
// still reconciled (loaded directly, not found through the listing).
// Before, the cycle listed until killed and reconciled nothing, the named
// table included; with an endless listCatalogs the named tables were
// skipped even once the listing failed.
func TestNamedTablesRunWhenTheListingNeverEnds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		endless []string
		rules   func(e *env) []sync.Rule
	}{
		// The named table's own schema is listed (to find it in a page).
		{"tables of its schema", []string{"tables"}, func(e *env) []sync.Rule {
			return []sync.Rule{{Include: []string{e.name("t").String(), e.catalog + ".other_*.*"}}}
		}},
		// A pattern over every catalog needs listCatalogs.
		{"catalogs", []string{"catalogs"}, func(e *env) []sync.Rule {
			return []sync.Rule{{Include: []string{e.name("t").String(), "*.nothing_here.*"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dir := e.register("log-replay-latest-metadata-protocol", "t", 0)
			copyLog(t, "log-replay-latest-metadata-protocol", dir, -1) // the log moved on: t is out of sync
			direct := e.client
			base, listings := endlessListings(t, direct.BaseURL(), tc.endless...)
			proxied, err := uc.New(base, uc.Options{
				MaxListEntries: 500, // 22 pages
				Retry:          uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
			})
			if err != nil {
				t.Fatal(err)
			}
			e.client = proxied
			rep := e.reconciler(tc.rules(e)).Sync(context.Background())
			e.client = direct
			t.Logf("%d listing requests; %s; err %v", listings.Load(), rep.Summary(), rep.Err)
			if n := listings.Load(); n > 22 {
				t.Errorf("%d listing requests, want at most 22 (MaxListEntries 500)", n)
			}
			if rep.Err == nil || !strings.Contains(rep.Err.Error(), "500") {
				t.Errorf("report error %v, want the endless listing with its bound", rep.Err)
			}
			if len(rep.Results) != 1 || rep.Results[0].Table != e.name("t").String() || rep.Results[0].Outcome != sync.OutcomeSynced {
				t.Fatalf("results %+v, want %s synced", rep.Results, e.name("t"))
			}
			if p := plan.Diff(sync.LogStateOf(snapshot(t, dir), "file://"+dir), e.record("t"), plan.DiffOptions{}); !p.Empty() {
				t.Errorf("catalog still differs: %v", p.Kinds())
			}
		})
	}
}
