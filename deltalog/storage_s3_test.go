package deltalog

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	stdsync "sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Requests counts the HTTP requests and new TCP connections a gofakes3
// server sees.
type s3Requests struct {
	mu    stdsync.Mutex
	conns int
	reqs  map[string]int // "LIST", "GET", "GET range", "HEAD", ...
}

func (c *s3Requests) take() (int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conns, reqs := c.conns, c.reqs
	c.conns, c.reqs = 0, map[string]int{}
	return conns, reqs
}

// TestS3LoadReusesConnections: a Load over s3:// whose commits are fetched
// with up to prefetchMax concurrent GETs sends exactly the requests it
// needs (one LIST, one GET per file, no HEAD), and repeated Loads reuse
// their connections: the transport keeps as many idle connections per host
// as there are GETs in flight. With the SDK's default of 10 idle
// connections per host, every Load dialled again those above 10.
func TestS3LoadReusesConnections(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	ctx := context.Background()
	rec, srv := newS3Fake(t)
	creds := Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}
	u := "s3://lake/t?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	seed := openTable(t, u, creds)
	// The corpus table checkpointed at 10 (commits 11-14 after it), then 40
	// more commits without protocol or metaData: a Load reads all 44
	// commits (prefetchMax-1 at a time, the checkpoint alongside).
	testcorpus.ReadTree(t, filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log"), func(name string, data []byte) error {
		return seed.WriteAll(ctx, logDir+name, data, nil)
	})
	const latest = 54
	for v := int64(15); v <= latest; v++ {
		put(t, seed, commitKey(v), fmt.Sprintf(commitInfoLine, v)+addLine)
	}
	tbl, err := Open(ctx, u, WithCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tbl.Close() })
	// _last_checkpoint, commits 11..latest and the checkpoint (a few KB:
	// one GET, ranged or not).
	want := map[string]int{"LIST": 1, "GET": 1 + (latest - 10) + 1}
	rec.take()
	dialled := 0
	for i := range 5 {
		snap, err := tbl.Load(ctx, LoadOptions{})
		if err != nil || snap.Version != latest {
			t.Fatalf("Load %d = %v, %v; want version %d", i, snap, err, latest)
		}
		conns, reqs := rec.take()
		reqs["GET"] += reqs["GET range"]
		delete(reqs, "GET range")
		if diff := cmp.Diff(want, reqs); diff != "" {
			t.Errorf("Load %d requests (-want +got):\n%s", i, diff)
		}
		dialled += conns
	}
	// At most prefetchMax requests are ever in flight, so a transport that
	// keeps its idle connections needs about that many, dialled by the
	// first Load. A connection goes back to the pool a moment after its
	// body is read, so a GET started in that moment (the window slides)
	// may dial one more now and then: observed 0-10 over the four later
	// Loads. Dropping idle connections costs ~20 per Load.
	if limit := prefetchMax + prefetchMax/2; dialled > limit {
		t.Errorf("5 Loads opened %d connections, want at most %d (the GETs in flight, and a few more): idle connections were dropped and dialled again", dialled, limit)
	}
}

// newS3Fake starts a gofakes3 server with an empty bucket "lake" on
// loopback that counts its requests and new connections.
func newS3Fake(t *testing.T) (*s3Requests, *httptest.Server) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	rec := &s3Requests{reqs: map[string]int{}}
	fake := gofakes3.New(backend).Server()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := r.Method
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
			kind = "LIST"
		case r.Header.Get("Range") != "":
			kind += " range"
		}
		rec.mu.Lock()
		rec.reqs[kind]++
		rec.mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rec.mu.Lock()
			rec.conns++
			rec.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return rec, srv
}

// TestS3TablesShareClient: the tables of a fleet share one S3 client per
// URL parameters (ambient credentials) or one configuration and transport
// (vended credentials), so Loads of many tables reuse the same connections
// and opening a table costs no configuration load. With a client per table
// every table dialled its own connections, and with AWS_CA_BUNDLE set each
// Open parsed the bundle into a pool of its own (3.3 MB allocated, 240 KiB
// kept per table).
func TestS3TablesShareClient(t *testing.T) {
	if !s3Enabled {
		t.Skip("built with tag nos3")
	}
	bundle := ""
	for _, p := range []string{os.Getenv("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"} {
		if _, err := os.Stat(p); p != "" && err == nil {
			bundle = p
			break
		}
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDAMBIENT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	rec, srv := newS3Fake(t)
	const tables = 40
	params := "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	seed := openTable(t, "s3://lake"+params, Credentials{})
	seedCheckpointCopies(t, tables, func(key string, data []byte) error { return seed.WriteAll(ctx, key, data, nil) })
	for _, c := range []struct {
		name  string
		creds Credentials
	}{{"ambient", Credentials{}}, {"vended", Credentials{S3AccessKeyID: "AKIDVENDED", S3SecretAccessKey: "secret"}}} {
		t.Run(c.name, func(t *testing.T) {
			open := func(i int) *Table {
				tbl, err := Open(ctx, fmt.Sprintf("s3://lake/t%d%s", i, params), WithCredentials(c.creds))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = tbl.Close() })
				return tbl
			}
			tbls := []*Table{open(0)} // the first Open of these parameters makes the shared client
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := 1; i < tables; i++ {
				tbls = append(tbls, open(i))
			}
			runtime.ReadMemStats(&after)
			perOpen := (after.TotalAlloc - before.TotalAlloc) / (tables - 1)
			t.Logf("%d B allocated per Open (AWS_CA_BUNDLE=%q)", perOpen, bundle)
			if perOpen > 64<<10 {
				t.Errorf("an Open allocated %d B, want at most 64 KiB: the client is not shared", perOpen)
			}
			if c.creds == (Credentials{}) { // ambient: one client for all
				var first *s3.Client
				for i, tbl := range tbls {
					var cl *s3.Client
					if !tbl.bucket.As(&cl) {
						t.Fatalf("t%d: bucket exposes no s3 client", i)
					}
					if first == nil {
						first = cl
					}
					if cl != first {
						t.Errorf("t%d has an s3 client of its own; tables with the same URL parameters must share one", i)
					}
					if tbl.bucket != tbls[0].bucket || tbl.ownsBucket || tbl.prefix != fmt.Sprintf("t%d/", i) {
						t.Errorf("t%d: bucket %p (owned %v, prefix %q), want t0's %p, shared, under t%d/", i, tbl.bucket, tbl.ownsBucket, tbl.prefix, tbls[0].bucket, i)
					}
				}
				// Closing a table leaves the shared bucket to the others.
				if err := tbls[0].Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				for i, tbl := range tbls {
					if !tbl.ownsBucket || (i > 0 && tbl.bucket == tbls[0].bucket) {
						t.Errorf("t%d: a table with vended credentials shares its bucket", i)
					}
				}
			}
			rec.take()
			for i, tbl := range tbls {
				if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
					t.Fatalf("Load t%d: %v", i, err)
				}
			}
			// One Load has at most prefetchMax GETs in flight; a shared
			// pool needs about that many connections for all tables (and
			// now and then one more: see TestS3LoadReusesConnections).
			if conns, _ := rec.take(); conns > prefetchMax+prefetchMax/2 {
				limit := prefetchMax + prefetchMax/2
				t.Errorf("Loads of %d tables dialled %d connections, want at most %d: the tables do not share a connection pool", tables, conns, limit)
			}
		})
	}
}
