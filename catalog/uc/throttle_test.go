package uc

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a retry policy whose Sleep advances Now (no real waiting)
// and records each delay.
type fakeClock struct {
	mu     stdsync.Mutex
	now    time.Time
	slept  []time.Duration
	policy RetryPolicy
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	c.policy = RetryPolicy{MaxAttempts: 1, Jitter: func(d time.Duration) time.Duration { return d },
		Now: func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.slept = append(c.slept, d)
			c.now = c.now.Add(d)
			return ctx.Err()
		}}
	return c
}

func TestMaxRPSPacesEveryRequestOfTheClient(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, 200, `{"name":"t","catalog_name":"c","schema_name":"s"}`)
	})
	clk := newFakeClock()
	c, err := New(ts.URL+basePath, Options{MaxRPS: 10, Burst: 2, Retry: clk.policy})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := c.GetTable(context.Background(), "c.s.t"); err != nil {
			t.Fatal(err)
		}
	}
	// A burst of 2, then one token every 100 ms.
	want := []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if diff := cmp.Diff(want, clk.slept); diff != "" {
		t.Errorf("waits before requests (-want +got):\n%s", diff)
	}
	if n := len(ts.requests()); n != 5 {
		t.Errorf("%d requests sent, want 5", n)
	}
	if _, err := New(ts.URL+basePath, Options{MaxRPS: -1}); err == nil {
		t.Error("negative MaxRPS accepted")
	}
}

// TestRetryAfterHoldsWholeClient: a 429's Retry-After delays the client's
// other requests too, not only the resend of the one that got it.
func TestRetryAfterHoldsWholeClient(t *testing.T) {
	var calls atomic.Int32
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "7")
			writeJSON(w, 429, `{"error":{"message":"slow down","type":"TooManyRequests","code":429}}`)
			return
		}
		writeJSON(w, 200, `{"name":"t","catalog_name":"c","schema_name":"s"}`)
	})
	clk := newFakeClock()
	c, err := New(ts.URL+basePath, Options{Retry: clk.policy}) // MaxAttempts 1: the 429 goes back at once
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTable(context.Background(), "c.s.a"); err == nil {
		t.Fatal("the 429 was not reported")
	}
	if _, err := c.GetTable(context.Background(), "c.s.b"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, clk.slept); diff != "" {
		t.Errorf("the next request did not wait out Retry-After (-want +got):\n%s", diff)
	}
	if _, err := c.GetTable(context.Background(), "c.s.c"); err != nil {
		t.Fatal(err)
	}
	if len(clk.slept) != 1 {
		t.Errorf("waited again after the pause was over: %v", clk.slept)
	}
}

// TestIdleConnsCoverConcurrency: 16 goroutines sending back-to-back
// requests reuse their connections instead of dialing new ones (Go's
// default transport keeps 2 idle connections per host).
func TestIdleConnsCoverConcurrency(t *testing.T) {
	const workers, each = 16, 25
	var dials atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"name":"t","catalog_name":"c","schema_name":"s"}`)
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c, err := New(ts.URL+basePath, Options{IdleConnsPerHost: workers})
	if err != nil {
		t.Fatal(err)
	}
	var wg stdsync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := c.GetTable(context.Background(), "c.s.t"); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(2 * time.Millisecond) // the worker's own work between requests
			}
		})
	}
	wg.Wait()
	// At most one connection per worker can be busy; a few more may be
	// dialed while an idle one is on its way back, never one per request.
	if n := dials.Load(); n > 2*workers {
		t.Errorf("%d connections for %d requests from %d workers, want at most %d", n, workers*each, workers, 2*workers)
	}
	t.Logf("%d connections for %d requests", dials.Load(), workers*each)
}

// TestHTTP2WhenOffered: against a TLS server that offers h2 (ALPN), the
// built-in transport speaks HTTP/2, also with a custom CA bundle.
func TestHTTP2WhenOffered(t *testing.T) {
	var proto atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		writeJSON(w, 200, `{"name":"t","catalog_name":"c","schema_name":"s"}`)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(ts.URL+basePath, Options{CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTable(context.Background(), "c.s.t"); err != nil {
		t.Fatal(err)
	}
	if p := proto.Load(); p != 2 {
		t.Errorf("request arrived as HTTP/%d, want HTTP/2", p)
	}
}
