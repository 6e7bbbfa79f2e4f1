package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// guardOpen are the paths the access guard lets through without a token:
// the liveness and readiness probes, which kubelets and load balancers call
// without credentials and which reveal nothing.
var guardOpen = map[string]bool{"/healthz": true, "/readyz": true}

// guard requires "Authorization: Bearer <token>" on every request to h except
// the probes (/healthz, /readyz). An empty token turns the guard off (h is
// returned as is); bind --listen to 127.0.0.1 instead, or configure a token.
// The comparison takes the same time whatever the presented token is.
func guard(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if guardOpen[r.URL.Path] {
			h.ServeHTTP(w, r)
			return
		}
		got, ok := bearer(r.Header.Get("Authorization"))
		// Comparing fixed-size digests keeps the compare constant-time even
		// in the token's length.
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="deltasync"`)
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, "unauthorized: send Authorization: Bearer <token> (the daemon's http.token_file)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer extracts the token of an "Authorization: Bearer <token>" header
// value; the scheme is case-insensitive (RFC 9110 §11.1).
func bearer(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// readGuardToken reads the HTTP access token from a mounted file (the
// --http-token-file flag, DELTASYNC_HTTP_TOKEN_FILE, config http.token_file).
// Surrounding whitespace (a trailing newline) is dropped; an empty file is an
// error, so a broken secret mount never silently opens the endpoints. An
// empty path means no guard: it returns "" and no error.
func readGuardToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("http.token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("http.token_file %s: %w", path, errEmptyToken)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("http.token_file %s: the token must be one line without spaces", path)
	}
	return tok, nil
}

var errEmptyToken = errors.New("file is empty")
