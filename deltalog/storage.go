package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/deltasync/deltasync/internal/redact"
)

// This file turns a table URL into a bucket rooted at the table (Open,
// openBucket); the per-store clients are built in storage_s3.go,
// storage_gcs.go and storage_azure.go. The requests a Table makes on that
// bucket (get, list, ranged reads) are in storage_table.go.

// WithCredentials makes Open build the storage client from c (credentials
// vended by the catalog) instead of the ambient ones (environment, instance
// metadata, config files). Only the fields for the URL's cloud are used:
// S3 key, secret and session token for s3://, the SAS token for azblob://,
// the OAuth access token for gs://. It has no effect on file:// and mem://.
func WithCredentials(c Credentials) Option {
	return func(o *options) { o.creds = c }
}

// Open opens the Delta table whose root is rawURL and returns a Table that
// reads its _delta_log. Supported forms:
//
//	/data/tables/t, ./t, file:///data/tables/t   local directory
//	file:/data/tables/t                            the same (Hadoop's spelling)
//	mem://bucket/t                                 in-memory (tests; always empty)
//	s3://bucket/path/t?region=..&endpoint=..&use_path_style=true
//	gs://bucket/path/t
//	azblob://container/path/t?storage_account=..&protocol=http&domain=..
//
// Query parameters are passed to the gocloud.dev driver of the scheme. With
// WithCredentials the driver client is built from those credentials;
// otherwise the driver's ambient credentials apply. A driver left out at
// build time (tags nos3, nogcs, noazure) yields an error naming the tag.
//
// Open makes no storage request; a missing table is reported by Load.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Table, error) {
	o := applyOptions(opts)
	rawURL = hadoopFile(rawURL)
	st, name, err := openStore(ctx, rawURL, o.creds, true)
	if err != nil {
		return nil, &LogError{Op: "open", Table: redact.Location(rawURL), Version: -1, Err: classifyStoreError(err)}
	}
	root, err := openRoot(rawURL)
	if err != nil {
		if !st.shared {
			_ = st.b.Close()
		}
		return nil, &LogError{Op: "open", Table: name, Version: -1, Err: err}
	}
	t := NewTable(st.b, name, opts...)
	t.prefix, t.ownsBucket, t.root = st.prefix, !st.shared, root
	if k := gateKey(rawURL); k != "" {
		g := t.opts.gates
		if g == nil {
			g = defaultGates
		}
		t.gate = g.gate(k)
	}
	return t, nil
}

// gateKey names the bucket of an object-store table URL for its shared
// in-flight limit and backoff (bucketGate): "s3://bucket", "gs://bucket",
// "azblob://account/container", with the endpoint where the URL names
// one (a bucket of the same name elsewhere is another bucket). Local and
// mem:// URLs have none.
func gateKey(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	q := u.Query()
	switch u.Scheme {
	case "s3":
		return "s3://" + u.Host + "?endpoint=" + q.Get("endpoint")
	case "gs":
		return "gs://" + u.Host
	case "azblob":
		account := q.Get("storage_account")
		if account == "" {
			account = os.Getenv("AZURE_STORAGE_ACCOUNT")
		}
		return "azblob://" + account + "." + q.Get("domain") + "/" + u.Host
	}
	return ""
}

// store is where a table's keys are read: bucket b, under prefix ("" or
// "path/to/table/"). A shared bucket is not closed with the table.
type store struct {
	b      *blob.Bucket
	prefix string
	shared bool
}

// openBucket returns a bucket rooted at the table directory of rawURL (its
// keys are "_delta_log/...") and the table name used in errors; the caller
// owns it.
func openBucket(ctx context.Context, rawURL string, creds Credentials) (*blob.Bucket, string, error) {
	st, name, err := openStore(ctx, rawURL, creds, false)
	if err != nil || st.prefix == "" {
		return st.b, name, err
	}
	return blob.PrefixedBucket(st.b, st.prefix), name, nil
}

// openStore returns the store of the table at rawURL and the table name
// used in errors. With share, a local table is read through one bucket for
// the whole file system, shared by every local table (see localPrefix),
// and an S3 table without vended credentials through the one bucket of its
// bucket name and URL parameters (sharedBuckets); otherwise the bucket is
// the table's own.
func openStore(ctx context.Context, rawURL string, creds Credentials, share bool) (store, string, error) {
	rawURL = hadoopFile(rawURL)
	name := redact.Location(rawURL)
	if name == rawURL {
		name = rawURL // the caller's string, not a copy kept with the table
	}
	if !strings.Contains(rawURL, "://") {
		st, err := openLocal(rawURL, share)
		return st, name, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return store{}, name, fmt.Errorf("invalid table URL: %w", err)
	}
	if u.Scheme != "file" && u.Host == "" {
		return store{}, name, fmt.Errorf("%s URL %q names no bucket", u.Scheme, name)
	}
	if u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return store{}, name, fmt.Errorf("file URL %q has a host; want file:///absolute/path", name)
		}
		st, err := openLocal(u.Path, share)
		return st, name, err
	}
	var open func(context.Context, *url.URL, Credentials) (*blob.Bucket, error)
	switch u.Scheme {
	case "mem":
		return store{b: memblob.OpenBucket(nil), prefix: tableRoot(u.Path)}, name, nil
	case "s3":
		open = openS3
	case "gs":
		open = openGCS
	case "azblob":
		open = openAzure
	default:
		return store{}, name, fmt.Errorf("unsupported URL scheme %q (want file, mem, s3, gs or azblob)", u.Scheme)
	}
	if share && u.Scheme == "s3" && creds == (Credentials{}) {
		// The driver reads the bucket name and the parameters, never the
		// path: tables in one bucket share its bucket, as they share the
		// client of those parameters (s3Clients). Not gs:// and azblob://:
		// their clients also read the environment (emulator host, account),
		// which the key would not hold.
		key := u.Scheme + "://" + u.Host + "?" + u.Query().Encode()
		b, err := sharedBuckets.get(key, func() (*blob.Bucket, error) {
			bu := *u
			bu.Path, bu.RawPath = "", ""
			return open(ctx, &bu, creds)
		})
		if err != nil {
			return store{}, name, err
		}
		return store{b: b, prefix: tableRoot(u.Path), shared: true}, name, nil
	}
	b, err := open(ctx, u, creds)
	if err != nil {
		return store{}, name, err
	}
	return store{b: b, prefix: tableRoot(u.Path)}, name, nil
}

// sharedBuckets are the buckets tables opened with Open share: "/" over the
// whole local file system for local tables, and one per bucket name and
// URL parameters for S3 tables with ambient credentials. A gocloud bucket
// per table (driver state, tracer) was ~0.5 KiB and ~10 objects kept per
// open table.
var sharedBuckets sharedClients[*blob.Bucket]

// openLocal opens the table directory dir: as a prefix of the shared
// file-system bucket when share is set and the path allows it, else as a
// bucket rooted at the directory.
func openLocal(dir string, share bool) (store, error) {
	abs, err := tableDir(dir)
	if err != nil {
		return store{}, err
	}
	if prefix, ok := localPrefix(abs); share && ok {
		b, err := sharedBuckets.get("/", func() (*blob.Bucket, error) { return fileblob.OpenBucket("/", &fileblob.Options{}) })
		if err != nil {
			return store{}, err
		}
		return store{b: b, prefix: prefix, shared: true}, nil
	}
	b, err := fileblob.OpenBucket(abs, &fileblob.Options{})
	return store{b: b}, err
}

// localPrefix returns the key prefix of the absolute directory abs in a
// fileblob bucket rooted at "/". ok is false where fileblob would not map
// that key to abs unchanged (it escapes control characters and anything
// that looks like its own escapes, "__0x"), and off Unix.
func localPrefix(abs string) (string, bool) {
	if os.PathSeparator != '/' || !strings.HasPrefix(abs, "/") || abs == "/" || strings.Contains(abs, "__0x") {
		return "", false
	}
	for i := 0; i < len(abs); i++ {
		if abs[i] < 0x20 {
			return "", false
		}
	}
	return abs[1:] + "/", true
}

// tableDir returns the absolute path of the local table directory dir,
// which must exist.
func tableDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("empty table path")
	}
	abs, err := filepath.Abs(filepath.FromSlash(dir))
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: directory %s does not exist", ErrNotATable, abs)
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// tableRoot turns a URL path into a bucket key prefix ("a/b/" or "").
func tableRoot(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}

// keepFetchConns lets an object-store client's transport keep as many idle
// connections per host as a few Loads have GETs in flight. The AWS and
// Azure SDKs' defaults (10) are below prefetchMax, so the connections
// above 10 of every burst of concurrent commit GETs were closed and
// dialled again: 23-30 new TCP connections per Load of a table with 100
// commits after its checkpoint on S3, when at most 16 GETs were in flight
// (TestS3LoadReusesConnections, TestAzureLoadReusesConnections).
func keepFetchConns(tr *http.Transport) {
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, idleConnsPerHost)
	tr.MaxIdleConns = max(tr.MaxIdleConns, idleConnsPerHost)
}
