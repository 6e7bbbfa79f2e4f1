package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guardTarget answers 200 "reached" for every path, so the tests see only
// what the guard does.
var guardTarget = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("reached"))
})

func TestGuard(t *testing.T) {
	const token = "s3cret-t0ken"
	tests := []struct {
		name   string
		token  string // configured
		path   string
		auth   string // Authorization header; "" sends none
		want   int
		wwwHdr bool
	}{
		{name: "right token", token: token, path: "/metrics", auth: "Bearer " + token, want: 200},
		{name: "scheme is case-insensitive", token: token, path: "/", auth: "bearer " + token, want: 200},
		{name: "no header", token: token, path: "/metrics", want: 401, wwwHdr: true},
		{name: "wrong token", token: token, path: "/", auth: "Bearer nope", want: 401, wwwHdr: true},
		{name: "token prefix", token: token, path: "/", auth: "Bearer " + token[:5], want: 401, wwwHdr: true},
		{name: "token plus suffix", token: token, path: "/", auth: "Bearer " + token + "x", want: 401, wwwHdr: true},
		{name: "basic scheme", token: token, path: "/", auth: "Basic " + token, want: 401, wwwHdr: true},
		{name: "scheme only", token: token, path: "/", auth: "Bearer", want: 401, wwwHdr: true},
		{name: "empty bearer", token: token, path: "/", auth: "Bearer ", want: 401, wwwHdr: true},
		{name: "token without scheme", token: token, path: "/", auth: token, want: 401, wwwHdr: true},
		{name: "unknown path still guarded", token: token, path: "/debug/pprof/", want: 401, wwwHdr: true},
		{name: "healthz open", token: token, path: "/healthz", want: 200},
		{name: "readyz open", token: token, path: "/readyz", want: 200},
		{name: "readyz open with a wrong token", token: token, path: "/readyz", auth: "Bearer nope", want: 200},
		{name: "probe look-alike guarded", token: token, path: "/healthz/x", want: 401, wwwHdr: true},
		{name: "probe prefix guarded", token: token, path: "/healthzz", want: 401, wwwHdr: true},
		{name: "no token configured: open", token: "", path: "/metrics", want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			guard(tt.token, guardTarget).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("GET %s with %q: status %d, want %d", tt.path, tt.auth, rec.Code, tt.want)
			}
			if got := rec.Header().Get("WWW-Authenticate") != ""; got != tt.wwwHdr {
				t.Errorf("WWW-Authenticate present = %v, want %v", got, tt.wwwHdr)
			}
			if tt.want == 200 && rec.Body.String() != "reached" {
				t.Errorf("body %q: the wrapped handler was not reached", rec.Body.String())
			}
			if tt.want == 401 && rec.Body.String() == "reached" {
				t.Error("the wrapped handler was reached without a valid token")
			}
		})
	}
}

// TestGuardDaemonMux wraps the daemon's real route shapes: the probes stay
// open, /metrics and the status page need the token.
func TestGuardDaemonMux(t *testing.T) {
	mux := http.NewServeMux()
	for _, p := range []string{"GET /metrics", "GET /healthz", "GET /readyz", "GET /{$}"} {
		mux.Handle(p, guardTarget)
	}
	srv := httptest.NewServer(guard("tok", mux))
	t.Cleanup(srv.Close)
	tests := []struct {
		path, auth string
		want       int
	}{
		{"/", "", 401},
		{"/", "Bearer tok", 200},
		{"/metrics", "", 401},
		{"/metrics", "Bearer tok", 200},
		{"/healthz", "", 200},
		{"/readyz", "", 200},
		{"/nothing", "", 401},
		{"/nothing", "Bearer tok", 404},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, srv.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s (auth %q): %d, want %d", tt.path, tt.auth, resp.StatusCode, tt.want)
		}
	}
}

func TestReadGuardToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr bool
		isEmpty bool
	}{
		{name: "no file configured", path: "", want: ""},
		{name: "trailing newline dropped", path: write("nl", "abc123\n"), want: "abc123"},
		{name: "missing file", path: filepath.Join(dir, "missing"), wantErr: true},
		{name: "empty file", path: write("empty", " \n"), wantErr: true, isEmpty: true},
		{name: "two lines", path: write("two", "abc\ndef\n"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readGuardToken(tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.isEmpty && !errors.Is(err, errEmptyToken) {
				t.Errorf("err = %v, want errEmptyToken", err)
			}
			if got != tt.want {
				t.Errorf("token = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGuardRunEndToEnd runs the real daemon with --http-token-file: the
// status page and /metrics need the token, the probes do not.
func TestGuardRunEndToEnd(t *testing.T) {
	const token = "e2e-Token_0123456789"
	d := startDaemonWithToken(t, token)
	tests := []struct {
		path, token string
		want        int
	}{
		{"/", "", http.StatusUnauthorized},
		{"/", "wrong", http.StatusUnauthorized},
		{"/", token, http.StatusOK},
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", token, http.StatusOK},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
	}
	for _, tt := range tests {
		code, body, err := e2eGet(d.url(tt.path), tt.token)
		if err != nil {
			t.Fatal(err)
		}
		if code != tt.want {
			t.Errorf("GET %s with token %q: %d, want %d", tt.path, tt.token, code, tt.want)
		}
		if code == http.StatusUnauthorized && strings.Contains(body, "deltasync_") {
			t.Errorf("GET %s without the token leaked metrics", tt.path)
		}
	}
}
