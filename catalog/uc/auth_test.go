package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

const secretToken = "dapi-SECRET-0123456789abcdef"

func TestTokenSources(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"UC_TOKEN": "  envtok\n"}
	getenv := func(k string) string { return env[k] }

	if tok, err := StaticToken("s").Token(ctx); err != nil || tok != "s" {
		t.Errorf("static: %q %v", tok, err)
	}
	if tok, err := EnvToken(getenv, "UC_TOKEN").Token(ctx); err != nil || tok != "envtok" {
		t.Errorf("env: %q %v", tok, err)
	}
	if _, err := EnvToken(getenv, "MISSING").Token(ctx); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("env missing: %v", err)
	}

	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ft := FileToken(path)
	if tok, err := ft.Token(ctx); err != nil || tok != "first" {
		t.Errorf("file: %q %v", tok, err)
	}
	// Rotation: new content and a new mtime are picked up.
	if err := os.WriteFile(path, []byte("second-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if tok, err := ft.Token(ctx); err != nil || tok != "second-token" {
		t.Errorf("rotated file: %q %v", tok, err)
	}
	if err := os.WriteFile(path, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later.Add(time.Hour), later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := ft.Token(ctx); err == nil {
		t.Error("empty token file accepted")
	}
	// Symlink swap (how Kubernetes rotates mounted secrets), same size and mtime.
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, f := range []struct{ path, tok string }{{a, "tokenA"}, {b, "tokenB"}} {
		if err := os.WriteFile(f.path, []byte(f.tok), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "token")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	lt := FileToken(link)
	if tok, _ := lt.Token(ctx); tok != "tokenA" {
		t.Errorf("symlinked token = %q", tok)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	if tok, _ := lt.Token(ctx); tok != "tokenB" {
		t.Errorf("after symlink swap token = %q, want tokenB", tok)
	}
	if _, err := FileToken(filepath.Join(t.TempDir(), "nope")).Token(ctx); err == nil {
		t.Error("missing token file accepted")
	}
}

func TestBearerHeaderAndRedaction(t *testing.T) {
	// The server echoes the Authorization header in its error body; the
	// client must not let the token through into the error.
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if strings.Contains(r.URL.Path, "echo") {
			writeJSON(w, 401, fmt.Sprintf(`{"error":{"message":"bad token %s","type":"NotAuthorizedException %s","code":401}}`,
				r.Header.Get("Authorization"), r.Header.Get("Authorization")))
			return
		}
		if strings.Contains(r.URL.Path, "long") { // token straddles the message length limit
			w.WriteHeader(500)
			fmt.Fprintf(w, "%s%s", strings.Repeat("x", maxErrorMessage-30), r.Header.Get("Authorization"))
			return
		}
		if strings.Contains(r.URL.Path, "html") {
			w.WriteHeader(502)
			fmt.Fprintf(w, "<html>upstream saw %s</html>", r.Header.Get("Authorization"))
			return
		}
		writeJSON(w, 200, loadTableBody)
	})
	opts := Options{Token: StaticToken(secretToken)}
	c := newClient(t, ts.URL, opts)
	ctx := context.Background()
	if _, err := c.LoadTable(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	if got := ts.requests()[0].Auth; got != "Bearer "+secretToken {
		t.Errorf("Authorization = %q", got)
	}
	for _, table := range []string{"echo", "html", "long"} {
		_, err := c.LoadTable(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: table})
		if err == nil {
			t.Fatalf("%s: want error", table)
		}
		var ae *APIError
		errors.As(err, &ae)
		for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", ae)} {
			if strings.Contains(s, secretToken) || strings.Contains(s, secretToken[:12]) {
				t.Errorf("%s: token leaked: %s", table, s)
			}
		}
	}
	// Options and Client never print the token, whatever the verb.
	for _, s := range []string{fmt.Sprint(opts), fmt.Sprintf("%+v", opts), fmt.Sprintf("%#v", opts), fmt.Sprint(c), fmt.Sprintf("%v", opts.Token), fmt.Sprintf("%#v", opts.Token)} {
		if strings.Contains(s, secretToken) {
			t.Errorf("token printed: %s", s)
		}
	}
	cc := ClientCredentialsConfig{ClientID: "id", ClientSecret: secretToken}
	for _, s := range []string{fmt.Sprint(cc), fmt.Sprintf("%+v", cc), fmt.Sprintf("%#v", cc)} {
		if strings.Contains(s, secretToken) {
			t.Errorf("client secret printed: %s", s)
		}
	}
}

func TestTokenErrorStopsRequest(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, loadTableBody) })
	c := newClient(t, ts.URL, Options{Token: FileToken(filepath.Join(t.TempDir(), "absent"))})
	if _, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err == nil || !strings.Contains(err.Error(), "token file") {
		t.Fatalf("err = %v", err)
	}
	if n := len(ts.requests()); n != 0 {
		t.Errorf("sent %d requests without a token", n)
	}
}

func TestClientCredentials(t *testing.T) {
	tokenCalls := 0
	idp := newTestServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		tokenCalls++
		user, pass, ok := r.BasicAuth()
		if !ok || user != "sp-id" || pass != "sp-secret" || !strings.Contains(string(body), "grant_type=client_credentials") ||
			!strings.Contains(string(body), "scope=all-apis") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "echo " + pass})
			return
		}
		writeJSON(w, 200, `{"access_token":"m2m-access","token_type":"Bearer","expires_in":3600}`)
	})
	uc := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, loadTableBody) })

	ts := ClientCredentials(ClientCredentialsConfig{ClientID: "sp-id", ClientSecret: "sp-secret", TokenURL: idp.URL + "/oidc/v1/token", Scopes: []string{"all-apis"}})
	c := newClient(t, uc.URL, Options{Token: ts})
	for range 3 {
		if _, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := uc.requests()[2].Auth; got != "Bearer m2m-access" {
		t.Errorf("Authorization = %q", got)
	}
	if tokenCalls != 1 {
		t.Errorf("token endpoint called %d times, want 1 (cached)", tokenCalls)
	}

	bad := ClientCredentials(ClientCredentialsConfig{ClientID: "sp-id", ClientSecret: "wrong-" + secretToken, TokenURL: idp.URL + "/oidc/v1/token"})
	_, err := bad.Token(context.Background())
	if err == nil || strings.Contains(err.Error(), secretToken) || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("bad credentials: err = %v", err)
	}
}
