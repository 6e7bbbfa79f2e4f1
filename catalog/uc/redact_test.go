package uc

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

func TestRedactToken(t *testing.T) {
	const tok = "dapiAB12cd34EF56gh78"
	tests := []struct{ in, want string }{
		{"token " + tok + " rejected", "token [REDACTED] rejected"},
		{"lower " + strings.ToLower(tok), "lower [REDACTED]"},
		{"upper " + strings.ToUpper(tok) + "!", "upper [REDACTED]!"},
		{"prefix " + tok[:8] + "…", "prefix [REDACTED]…"},
		{"middle x" + tok[5:14] + "x", "middle x[REDACTED]x"},
		{"seven " + tok[:7] + " stays", "seven " + tok[:7] + " stays"},
		{"twice " + tok[:10] + "/" + tok[10:], "twice [REDACTED]/[REDACTED]"},
		{"nothing here", "nothing here"},
	}
	for _, tt := range tests {
		if got := redactToken(tt.in, tok); got != tt.want {
			t.Errorf("redactToken(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := redactToken("a short tok here", "tok"); got != "a short [REDACTED] here" {
		t.Errorf("short token: %q", got)
	}
}

// A server echoing the token lowercased or cut short leaks none of it.
func TestErrorsNeverEchoTheToken(t *testing.T) {
	const tok = "SecretToken0123456789abcdefXYZ"
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		echo := strings.ToLower(r.Header.Get("Authorization")) + " / " + r.Header.Get("Authorization")[7:20]
		writeJSON(w, 401, `{"error":{"message":"bad credentials `+echo+`","type":"UnauthorizedException","code":16}}`)
	})
	c := newClient(t, ts.URL, Options{Token: StaticToken(tok)})
	_, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"})
	if err == nil {
		t.Fatal("no error")
	}
	for i := 0; i+8 <= len(tok); i++ {
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tok[i:i+8])) {
			t.Fatalf("error leaks %q: %v", tok[i:i+8], err)
		}
	}
}

// OnWait hears of every wait, with the server's Retry-After, capped.
func TestRetryOnWaitReportsCappedRetryAfter(t *testing.T) {
	calls := 0
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		calls++
		if calls == 1 {
			w.Header().Set("Retry-After", "120")
			writeJSON(w, 429, `{"error":{"message":"slow down","type":"TooManyRequests","code":8}}`)
			return
		}
		writeJSON(w, 200, loadTableBody)
	})
	var delays []time.Duration
	policy := noSleep(&delays)
	policy.MaxRetryAfter = 30 * time.Second
	type wait struct {
		op          string
		wait, after time.Duration
	}
	var waits []wait
	policy.OnWait = func(op string, _ int, w, after time.Duration, _ error) {
		waits = append(waits, wait{op: op, wait: w, after: after})
	}
	c := newClient(t, ts.URL, Options{Retry: policy})
	if _, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != (wait{op: "loadTable", wait: 30 * time.Second, after: 120 * time.Second}) || len(delays) != 1 || delays[0] != 30*time.Second {
		t.Fatalf("waits %v, delays %v; want one 30s wait for Retry-After 120s", waits, delays)
	}
}
