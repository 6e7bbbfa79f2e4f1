//go:build !nogcs

package deltalog

import (
	"context"
	"errors"
	"net/url"
	"os"

	"cloud.google.com/go/storage"
	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2"
)

// gcsEnabled reports whether this build includes the gs:// driver.
const gcsEnabled = true

// openGCS opens the bucket of a gs:// URL. Without a vended token the
// gocloud URL opener (application default credentials) is used; with one
// the HTTP client sends that token. STORAGE_EMULATOR_HOST is honoured by
// the driver either way.
func openGCS(ctx context.Context, u *url.URL, c Credentials) (*blob.Bucket, error) {
	if c.GCSOAuthToken == "" {
		// Without default credentials the gocloud opener prints a warning
		// to stdout (breaking -o json) and goes on with an empty key whose
		// requests fail with a misleading parse error: say so up front.
		// Checked once per process (a success is kept): finding them reads
		// files or asks the metadata server, and the opener's client is
		// shared by every gs:// table anyway.
		if os.Getenv("STORAGE_EMULATOR_HOST") == "" && os.Getenv("STORAGE_EMULATOR_HOST_GRPC") == "" {
			if _, err := gcsDefaultCredentials.get("", func() (bool, error) {
				_, err := gcp.DefaultCredentials(ctx)
				return err == nil, err
			}); err != nil {
				return nil, classifyStoreError(err)
			}
		}
		bucketURL := &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
		return gcsRetry(blob.OpenBucket(ctx, bucketURL.String()))
	}
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.GCSOAuthToken, TokenType: "Bearer"})
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), ts)
	if err != nil {
		return nil, err
	}
	return gcsRetry(gcsblob.OpenBucket(ctx, client, u.Host, nil))
}

// gcsMaxAttempts bounds the GCS client's own attempts at one request
// (transport errors, 408 and 5xx but 503); by default it retries them,
// with a backoff doubling from 1 s to 30 s, until the context ends.
const gcsMaxAttempts = 4

// gcsRetry sets the retry policy of the bucket's GCS client: its default
// retries less throttling (429, 503: gcsThrottle), which the bucket's gate
// backs off for all of the bucket's tables together; each request retried
// on its own only added to the load of a throttled bucket, and, with no
// bound on attempts, kept a table's request waiting until its timeout.
func gcsRetry(b *blob.Bucket, err error) (*blob.Bucket, error) {
	if err != nil {
		return nil, err
	}
	var c *storage.Client
	if !b.As(&c) {
		_ = b.Close()
		return nil, errors.New("gs bucket exposes no storage client")
	}
	c.SetRetry(storage.WithMaxAttempts(gcsMaxAttempts), storage.WithErrorFunc(func(err error) bool {
		if _, ok := gcsThrottle(err); ok {
			return false
		}
		return storage.ShouldRetry(err)
	}))
	return b, nil
}

// gcsDefaultCredentials remembers that application default credentials
// were found.
var gcsDefaultCredentials sharedClients[bool]

// hintGCS sets StartOffset (inclusive) on a GCS object query.
func hintGCS(as func(any) bool, full func(string) (string, bool)) bool {
	var q *storage.Query
	if !as(&q) || q == nil {
		return false
	}
	if k, ok := full(q.Prefix); ok {
		q.StartOffset = k
	}
	return true
}
