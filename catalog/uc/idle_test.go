package uc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stallServer answers getTable by writing the first `head` bytes of body
// (headers only when head is 0, nothing at all when head is -1), then
// holding the request open without a byte more until the client gives up.
func stallServer(t *testing.T, head int, body string) (*testServer, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		requests.Add(1)
		if head >= 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(body[:head]))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	return ts, &requests
}

// TestIdleTimeoutGivesUpAStalledServer: a server that stops sending (before
// the headers, after them, or in the middle of the body) is given up after
// IdleTimeout, not after the request Timeout: ErrStalled, retried like a
// timeout. Before, each attempt took the whole Timeout (4 × 30 s).
func TestIdleTimeoutGivesUpAStalledServer(t *testing.T) {
	const body = `{"name":"t","catalog_name":"c","schema_name":"s","comment":"stalled"}`
	for _, tc := range []struct {
		name string
		head int
	}{{"before headers", -1}, {"after headers", 0}, {"mid-body", 20}} {
		t.Run(tc.name, func(t *testing.T) {
			ts, requests := stallServer(t, tc.head, body)
			c := newClient(t, ts.URL, Options{Timeout: 20 * time.Second, IdleTimeout: 300 * time.Millisecond, Retry: RetryPolicy{MaxAttempts: 4}})
			start := time.Now()
			_, err := c.GetTable(context.Background(), "c.s.t")
			took := time.Since(start)
			t.Logf("%s: %v", took, err)
			if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "getTable") || !strings.Contains(err.Error(), "300ms") {
				t.Fatalf("err = %v, want ErrStalled naming getTable and the 300ms idle timeout", err)
			}
			if n := requests.Load(); n != 2 {
				t.Errorf("%d attempts of 4 allowed, want 2 (a stall is retried once, a second one ends the request)", n)
			}
			if took > 15*time.Second { // generous: two 300ms stalls, far under the 20 s Timeout
				t.Errorf("took %s: the idle timeout did not end the attempts", took)
			}
		})
	}
}

// TestIdleTimeoutLetsASlowAnswerFinish: an answer that keeps arriving, a
// byte every 50 ms, takes far longer than IdleTimeout in all and still
// succeeds: only the request Timeout bounds it.
func TestIdleTimeoutLetsASlowAnswerFinish(t *testing.T) {
	const body = `{"name":"t","catalog_name":"c","comment":"slow"}`
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		time.Sleep(100 * time.Millisecond) // the server thinks, within the idle timeout
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for i := range len(body) {
			if _, err := w.Write([]byte{body[i]}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	const idle = 500 * time.Millisecond
	c := newClient(t, ts.URL, Options{Timeout: 30 * time.Second, IdleTimeout: idle, Retry: RetryPolicy{MaxAttempts: 1}})
	start := time.Now()
	ti, err := c.GetTable(context.Background(), "c.s.t")
	took := time.Since(start)
	if err != nil || ti.Comment != "slow" {
		t.Fatalf("after %s: %+v, %v; want the slow answer", took, ti, err)
	}
	if took < 2*idle {
		t.Errorf("took %s: the answer was not slower than the idle timeout, the test shows nothing", took)
	}
}

// TestIdleTimeoutOff: a negative IdleTimeout leaves only the Timeout.
func TestIdleTimeoutOff(t *testing.T) {
	ts, _ := stallServer(t, 0, "")
	c := newClient(t, ts.URL, Options{Timeout: 700 * time.Millisecond, IdleTimeout: -1, Retry: RetryPolicy{MaxAttempts: 1}})
	_, err := c.GetTable(context.Background(), "c.s.t")
	if err == nil || errors.Is(err, ErrStalled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the request timeout", err)
	}
}
