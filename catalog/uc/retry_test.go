package uc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

func TestRetryResendsIdenticalRequest(t *testing.T) {
	tests := []struct {
		name       string
		failures   []int // statuses before success
		retryAfter string
		wantCalls  int
		wantErr    func(error) bool
		wantDelays []time.Duration
	}{
		{name: "503 then ok", failures: []int{503}, wantCalls: 2, wantDelays: []time.Duration{100 * time.Millisecond}},
		{name: "500, 502, 429 then ok", failures: []int{500, 502, 429}, wantCalls: 4,
			wantDelays: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "gives up after MaxAttempts", failures: []int{503, 503, 503, 503, 503}, wantCalls: 4,
			wantErr: Retryable, wantDelays: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "409 goes back at once", failures: []int{409}, wantCalls: 1, wantErr: IsConflict},
		{name: "400 not retried", failures: []int{400}, wantCalls: 1, wantErr: func(err error) bool { return !Retryable(err) }},
		{name: "404 not retried", failures: []int{404}, wantCalls: 1, wantErr: IsNotFound},
		{name: "Retry-After seconds", failures: []int{429}, retryAfter: "3", wantCalls: 2, wantDelays: []time.Duration{3 * time.Second}},
		{name: "Retry-After HTTP date", failures: []int{503}, retryAfter: "Mon, 30 Nov 2026 12:00:05 GMT", wantCalls: 2, wantDelays: []time.Duration{5 * time.Second}},
		{name: "Retry-After capped", failures: []int{503}, retryAfter: "86400", wantCalls: 2, wantDelays: []time.Duration{2 * time.Minute}},
		{name: "Retry-After shorter than backoff", failures: []int{503}, retryAfter: "0", wantCalls: 2, wantDelays: []time.Duration{100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				calls++
				if calls <= len(tt.failures) {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					typ := "InternalServerErrorException"
					if tt.failures[calls-1] == 409 {
						typ = TypeUpdateRequirementConflict
					}
					writeJSON(w, tt.failures[calls-1], `{"error":{"message":"assert-etag failed","type":"`+typ+`","code":1}}`)
					return
				}
				writeJSON(w, 200, loadTableBody)
			})
			var delays []time.Duration
			policy := noSleep(&delays)
			policy.Now = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
			c := newClient(t, ts.URL, Options{Retry: policy, Token: StaticToken("tok")})
			req := UpdateTableRequest{Requirements: []Requirement{AssertTableUUID{UUID: "u"}}, Updates: []Update{SetProperties{Updates: map[string]string{"a": "1"}}}}
			_, err := c.UpdateTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}, req)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr != nil && (err == nil || !tt.wantErr(err)) {
				t.Fatalf("err = %v", err)
			}
			reqs := ts.requests()
			if len(reqs) != tt.wantCalls {
				t.Fatalf("calls = %d, want %d", len(reqs), tt.wantCalls)
			}
			for _, r := range reqs[1:] {
				if diff := cmp.Diff(reqs[0], r); diff != "" {
					t.Errorf("resent request differs (-first +retry):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.wantDelays, delays); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryStopsOnContextCancel(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 503, `{}`) })
	ctx, cancel := context.WithCancel(context.Background())
	policy := noSleep(nil)
	policy.Sleep = func(ctx context.Context, _ time.Duration) error {
		cancel() // cancelled while backing off
		<-ctx.Done()
		return ctx.Err()
	}
	c := newClient(t, ts.URL, Options{Retry: policy})
	_, err := c.LoadTable(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(ts.requests()); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
}

// timeoutErr is a net.Error that reports a timeout.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// flakyTransport fails the first n round trips with err, then delegates.
type flakyTransport struct {
	n     int
	err   error
	calls int
	next  http.RoundTripper
}

func (f *flakyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.calls++
	if f.calls <= f.n {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return nil, f.err
	}
	return f.next.RoundTrip(r)
}

func TestRetryOnTimeoutAndConnectionError(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, loadTableBody) })
	for _, e := range []error{timeoutErr{}, syscall.ECONNRESET, io.ErrUnexpectedEOF} {
		ft := &flakyTransport{n: 2, err: e, next: http.DefaultTransport}
		c := newClient(t, ts.URL, Options{HTTPClient: &http.Client{Transport: ft}})
		if _, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		if ft.calls != 3 {
			t.Errorf("%v: calls = %d, want 3", e, ft.calls)
		}
	}

	// The per-attempt Timeout applies: a hanging server yields a retryable timeout.
	hang := newTestServer(t, func(_ http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() })
	c := newClient(t, hang.URL, Options{Timeout: 20 * time.Millisecond, Retry: RetryPolicy{MaxAttempts: 1}})
	_, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"})
	if err == nil || !Retryable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging server: err = %v", err)
	}

	// Connection refused: retried up to MaxAttempts, then a Retryable error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var delays []time.Duration
	c = newClient(t, "http://"+addr, Options{Retry: noSleep(&delays)})
	_, err = c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"})
	if err == nil || !Retryable(err) || len(delays) != 3 {
		t.Fatalf("err = %v (retryable %v), delays %v", err, Retryable(err), delays)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, true},
		{"url timeout", &url.Error{Op: "Get", URL: "x", Err: context.DeadlineExceeded}, true},
		{"conn reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"refused wrapped", errors.Join(errors.New("x"), syscall.ECONNREFUSED), true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"other", errors.New("decode"), false},
		{"409", &APIError{Status: 409}, false},
		{"429", &APIError{Status: 429}, true},
	}
	for _, tt := range tests {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("%s: Retryable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackoffCapAndJitter(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}.withDefaults()
	for n := 1; n < 70; n++ {
		d := p.backoff(n, 0)
		if d < 0 || d > 5*time.Second {
			t.Fatalf("backoff(%d) = %v outside [0, MaxDelay]", n, d)
		}
	}
	if got := parseRetryAfter("garbage", time.Now()); got != 0 {
		t.Errorf("garbage Retry-After = %v", got)
	}
	if got := parseRetryAfter("-5", time.Now()); got != 0 {
		t.Errorf("negative Retry-After = %v", got)
	}
	if !strings.Contains(DefaultRetryPolicy().MaxDelay.String(), "10s") {
		t.Errorf("default MaxDelay = %v", DefaultRetryPolicy().MaxDelay)
	}
}
