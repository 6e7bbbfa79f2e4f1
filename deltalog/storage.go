package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	b, name, err := openBucket(ctx, rawURL, o.creds)
	if err != nil {
		return nil, &LogError{Op: "open", Table: redact.Location(rawURL), Version: -1, Err: classifyStoreError(err)}
	}
	root, err := openRoot(rawURL)
	if err != nil {
		_ = b.Close()
		return nil, &LogError{Op: "open", Table: name, Version: -1, Err: err}
	}
	t := NewTable(b, name, opts...)
	t.ownsBucket, t.root = true, root
	return t, nil
}

// openBucket returns a bucket rooted at the table directory of rawURL (its
// keys are "_delta_log/...") and the table name used in errors.
func openBucket(ctx context.Context, rawURL string, creds Credentials) (*blob.Bucket, string, error) {
	rawURL = hadoopFile(rawURL)
	name := redact.Location(rawURL)
	if !strings.Contains(rawURL, "://") {
		b, err := openDir(rawURL)
		return b, name, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, name, fmt.Errorf("invalid table URL: %w", err)
	}
	if u.Scheme != "file" && u.Host == "" {
		return nil, name, fmt.Errorf("%s URL %q names no bucket", u.Scheme, name)
	}
	var b *blob.Bucket
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, name, fmt.Errorf("file URL %q has a host; want file:///absolute/path", name)
		}
		b, err = openDir(u.Path)
		return b, name, err
	case "mem":
		b = memblob.OpenBucket(nil)
	case "s3":
		b, err = openS3(ctx, u, creds)
	case "gs":
		b, err = openGCS(ctx, u, creds)
	case "azblob":
		b, err = openAzure(ctx, u, creds)
	default:
		return nil, name, fmt.Errorf("unsupported URL scheme %q (want file, mem, s3, gs or azblob)", u.Scheme)
	}
	if err != nil {
		return nil, name, err
	}
	if root := tableRoot(u.Path); root != "" {
		b = blob.PrefixedBucket(b, root)
	}
	return b, name, nil
}

// openDir opens a local table directory as a bucket rooted at it.
func openDir(dir string) (*blob.Bucket, error) {
	if dir == "" {
		return nil, errors.New("empty table path")
	}
	abs, err := filepath.Abs(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: directory %s does not exist", ErrNotATable, abs)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", abs)
	}
	return fileblob.OpenBucket(abs, &fileblob.Options{})
}

// tableRoot turns a URL path into a bucket key prefix ("a/b/" or "").
func tableRoot(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}
