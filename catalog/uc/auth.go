package uc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	stdsync "sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TokenSource yields the bearer token sent as "Authorization: Bearer <t>".
// It is asked before every request, so rotating sources work. An empty
// token means "send no Authorization header". Implementations must not
// reveal the token from String().
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// StaticToken returns a TokenSource that always yields tok.
func StaticToken(tok string) TokenSource { return staticToken{tok: tok} }

type staticToken struct{ tok string }

func (s staticToken) Token(context.Context) (string, error) { return s.tok, nil }
func (s staticToken) String() string                        { return "StaticToken([REDACTED])" }
func (s staticToken) GoString() string                      { return s.String() }

// EnvToken returns a TokenSource that reads the variable name through getenv
// on every request (the caller passes os.Getenv or its own env map lookup;
// this package reads no environment itself). An unset variable is an error.
func EnvToken(getenv func(string) string, name string) TokenSource {
	return envToken{getenv: getenv, name: name}
}

type envToken struct {
	getenv func(string) string
	name   string
}

func (e envToken) Token(context.Context) (string, error) {
	v := strings.TrimSpace(e.getenv(e.name))
	if v == "" {
		return "", fmt.Errorf("catalog: token variable %s is empty or unset", e.name)
	}
	return v, nil
}
func (e envToken) String() string   { return "EnvToken(" + e.name + ")" }
func (e envToken) GoString() string { return e.String() }

// FileToken returns a TokenSource that reads the token from path (surrounding
// whitespace trimmed) and re-reads it whenever the file's identity, size or
// mtime changes, so a rotated secret is picked up (including a mounted
// Kubernetes secret, which is swapped through a symlink).
func FileToken(path string) TokenSource { return &fileToken{path: path} }

type fileToken struct {
	path string

	mu   stdsync.Mutex
	info os.FileInfo // of the file the cached token was read from
	tok  string
}

func (f *fileToken) Token(context.Context) (string, error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("catalog: token file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tok != "" && os.SameFile(f.info, st) && st.ModTime().Equal(f.info.ModTime()) && st.Size() == f.info.Size() {
		return f.tok, nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return "", fmt.Errorf("catalog: token file: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("catalog: token file %s is empty", f.path)
	}
	f.tok, f.info = tok, st
	return tok, nil
}
func (f *fileToken) String() string   { return "FileToken(" + f.path + ")" }
func (f *fileToken) GoString() string { return f.String() }

// OAuth2Token adapts an oauth2.TokenSource (which caches and refreshes).
func OAuth2Token(ts oauth2.TokenSource) TokenSource { return oauthToken{ts: ts} }

type oauthToken struct{ ts oauth2.TokenSource }

func (o oauthToken) Token(context.Context) (string, error) {
	t, err := o.ts.Token()
	if err != nil {
		return "", fmt.Errorf("catalog: oauth2 token: %w", redactOAuthError(err))
	}
	if t.AccessToken == "" {
		return "", errors.New("catalog: oauth2 token: empty access token")
	}
	return t.AccessToken, nil
}
func (o oauthToken) String() string   { return "OAuth2Token([REDACTED])" }
func (o oauthToken) GoString() string { return o.String() }

// redactOAuthError drops the token endpoint's response body, which may echo
// credentials, keeping only its status and error code.
func redactOAuthError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = "unknown"
		}
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return fmt.Errorf("token endpoint answered HTTP %d (%s)", status, code)
	}
	return err
}

// ClientCredentialsConfig configures the OAuth2 client-credentials flow,
// e.g. Databricks machine-to-machine auth (token URL
// https://<workspace>/oidc/v1/token, scope all-apis).
type ClientCredentialsConfig struct {
	ClientID     string
	ClientSecret string
	TokenURL     string
	Scopes       []string
	// HTTPClient fetches tokens (nil: a client with TLS verification on).
	HTTPClient *http.Client
}

// String redacts the secret.
func (c ClientCredentialsConfig) String() string {
	return fmt.Sprintf("ClientCredentialsConfig{ClientID:%q ClientSecret:[REDACTED] TokenURL:%q Scopes:%v}",
		c.ClientID, c.TokenURL, c.Scopes)
}

// GoString redacts the secret.
func (c ClientCredentialsConfig) GoString() string { return c.String() }

// ClientCredentials returns a caching TokenSource for the OAuth2
// client-credentials flow (golang.org/x/oauth2/clientcredentials).
func ClientCredentials(cfg ClientCredentialsConfig) TokenSource {
	cc := &clientcredentials.Config{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.TokenURL, Scopes: cfg.Scopes,
		AuthStyle: oauth2.AuthStyleInHeader,
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return OAuth2Token(oauth2.ReuseTokenSource(nil, cc.TokenSource(ctx)))
}
