package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// check-config refuses token files and variables that cannot yield a token,
// too-frequent schedules, and bad storage settings, naming each key.
func TestCheckConfigSecurityProblems(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good", "tok\n")
	unreadable := writeFile(t, dir, "unreadable", "tok\n")
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	_, rootCanRead := os.ReadFile(unreadable)
	base := []string{"check-config", "--catalog-url", "http://uc:8080/api/2.1/unity-catalog", "--include", "a.b.c"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // "" = OK
	}{
		{"good token file", []string{"--token-file", good}, nil, ""},
		{"empty token file", []string{"--token-file", writeFile(t, dir, "empty", "")}, nil, "--token-file " + filepath.Join(dir, "empty") + ": file is empty"},
		{"whitespace token file", []string{"--token-file", writeFile(t, dir, "ws", " \n\t\n")}, nil, "file is empty or only whitespace"},
		{"two-word token file", []string{"--token-file", writeFile(t, dir, "two", "a b\n")}, nil, "one line without spaces"},
		{"directory token file", []string{"--token-file", dir}, nil, "is a directory"},
		{"missing token file", []string{"--token-file", filepath.Join(dir, "nope")}, nil, "no such file"},
		{"unset token_env", []string{"--config", writeFile(t, dir, "env.yaml", "catalog:\n  token_env: UC_TOKEN_X\n")}, nil, "catalog.token_env: environment variable UC_TOKEN_X is unset or empty"},
		{"set token_env", []string{"--config", writeFile(t, dir, "env2.yaml", "catalog:\n  token_env: UC_TOKEN_X\n")}, map[string]string{"UC_TOKEN_X": "t"}, ""},
		{"negative schedule", []string{"--schedule", "@every -1m"}, nil, "at least 1s"},
		{"zero schedule", []string{"--schedule", "@every 0s"}, nil, "at least 1s"},
		{"millisecond schedule", []string{"--schedule", "@every 1ms"}, nil, "at least 1s"},
		{"one second schedule", []string{"--schedule", "@every 1s"}, nil, ""},
		{"bad allow-list", []string{"--allow-location", "s3://b/t?endpoint=x"}, nil, `--allow-location "s3://b/t?endpoint=x": no query`},
		{"unknown bucket option", []string{"--config", writeFile(t, dir, "b.yaml", "storage:\n  buckets:\n    - location: s3://b\n      options: {endpont: x}\n")}, nil, "storage.buckets[0].options.endpont: unknown"},
		{"bucket options", []string{"--config", writeFile(t, dir, "b2.yaml", "storage:\n  allowed_locations: [\"s3://b/**\"]\n  buckets:\n    - location: s3://b\n      options: {endpoint: \"http://127.0.0.1:9000\", use_path_style: \"true\"}\n")}, nil, ""},
		{"zero max_retry_after", []string{"--config", writeFile(t, dir, "r.yaml", "catalog:\n  max_retry_after: 0s\n")}, nil, "catalog.max_retry_after: must be positive"},
	}
	if rootCanRead != nil {
		tests = append(tests, struct {
			name string
			args []string
			env  map[string]string
			want string
		}{"unreadable token file", []string{"--token-file", unreadable}, nil, "permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.env, append(base, tt.args...)...)
			if tt.want == "" {
				if code != 0 {
					t.Fatalf("exit %d:\n%s", code, errOut)
				}
				return
			}
			if code != 1 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want 1 and %q in:\n%s", code, tt.want, errOut)
			}
		})
	}
}

// A hanging catalog: plan --timeout stops at the deadline and says so.
func TestPlanTimeout(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	code, _, errOut := runCLI(t, nil, "plan", "--catalog-url", hang.URL+"/api/2.1/unity-catalog", "--include", "a.b.c",
		"--timeout", "500ms", "--log-level", "error")
	if code != 1 || !strings.Contains(errOut, "--timeout 500ms reached") {
		t.Fatalf("exit %d, want 1 and the timeout named:\n%s", code, errOut)
	}
}

// Retry-After is capped by catalog.max_retry_after and the wait is logged
// with its reason.
func TestRetryAfterCappedAndLogged(t *testing.T) {
	tc := newTestCatalog(t)
	var served atomic.Bool
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !served.Swap(true) {
			w.Header().Set("Retry-After", "120")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error_code":"RESOURCE_EXHAUSTED","message":"slow down"}`))
			return
		}
		http.Redirect(w, r, tc.srv.URL()+strings.TrimPrefix(r.URL.Path, "/api/2.1/unity-catalog")+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
	}))
	defer slow.Close()
	cfg := writeFile(t, t.TempDir(), "c.yaml", "catalog:\n  max_retry_after: 3s\n")
	_, _, errOut := runCLI(t, nil, "plan", "--config", cfg, "--catalog-url", slow.URL+"/api/2.1/unity-catalog", "--include", "cat.s.*",
		"--log-level", "warn", "--timeout", "1m")
	for _, want := range []string{"waiting before retrying a catalog request", `"wait":3,`, `"retry_after":120`, "slow down"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("log lacks %s:\n%s", want, errOut)
		}
	}
}
