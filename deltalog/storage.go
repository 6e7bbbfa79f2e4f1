package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/deltasync/deltasync/internal/redact"
)

// logDir is the key prefix of a table's transaction log, relative to the
// table root.
const logDir = "_delta_log/"

// WithCredentials makes Open build the storage client from c (credentials
// vended by the catalog) instead of the ambient ones (environment, instance
// metadata, config files). Only the fields for the URL's cloud are used:
// S3 key, secret and session token for s3://, the SAS token for azblob://,
// the OAuth access token for gs://. It has no effect on file:// and mem://.
func WithCredentials(c Credentials) Option {
	return func(o *options) { o.creds = c }
}

// WithObserver reports every storage request (op "list" or "get") with its
// duration and error to obs; it is the hook for storage metrics.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observer = obs }
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

// listLogOptions are the LIST options of listLogPages.
func listLogOptions(startAfter string) *blob.ListOptions {
	opts := &blob.ListOptions{Prefix: logDir, Delimiter: "/"}
	if startAfter != "" && strings.HasPrefix(startAfter, logDir) {
		suffix := startAfter[len(logDir):]
		opts.BeforeList = func(as func(any) bool) error {
			hintStartAfter(as, logDir, suffix)
			return nil
		}
	}
	return opts
}

// sortObjects sorts a listing by key.
func sortObjects(objs []*blob.ListObject) {
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
}

// hintStartAfter hands the start-after position to whichever driver request
// as exposes. Each driver request already carries the full key prefix
// (bucket prefix + listPrefix), so the full start key is that prefix with
// listPrefix replaced by listPrefix+suffix.
func hintStartAfter(as func(any) bool, listPrefix, suffix string) {
	full := func(driverPrefix string) (string, bool) {
		if !strings.HasSuffix(driverPrefix, listPrefix) {
			return "", false
		}
		return driverPrefix + suffix, true
	}
	_ = hintS3(as, full) || hintGCS(as, full) || hintAzure(as, full)
}

// readFileInto reads the whole object at key (one GET), into a buffer
// sized from the reader's reported size; buf is reused for the data when
// it is big enough.
func readFileInto(ctx context.Context, b *blob.Bucket, key string, buf []byte) ([]byte, error) {
	r, err := b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	data, err := readSized(r, r.Size(), buf)
	_ = r.Close()
	if err != nil {
		return nil, err
	}
	return data, nil
}

// rangeReaderAt is an io.ReaderAt over one object: every ReadAt is one
// ranged GET. Nothing is cached between calls. It keeps the ctx it was made
// with, so it must not outlive the operation that made it.
type rangeReaderAt struct {
	ctx  context.Context
	b    *blob.Bucket
	key  string
	size int64
	// observe, when set, is told of every ranged GET.
	observe func(op string, start time.Time, err error)
}

// Size returns the object size.
func (r *rangeReaderAt) Size() int64 { return r.size }

// ReadAt reads len(p) bytes at off with one ranged GET.
func (r *rangeReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := int64(len(p))
	if off+want > r.size {
		want = r.size - off
	}
	if want == 0 {
		return 0, nil
	}
	start := time.Now()
	rd, err := r.b.NewRangeReader(r.ctx, r.key, off, want, nil)
	if err != nil {
		r.report(start, err)
		return 0, err
	}
	n, err := io.ReadFull(rd, p[:want])
	cerr := rd.Close()
	rep := err
	if errors.Is(rep, io.EOF) || errors.Is(rep, io.ErrUnexpectedEOF) {
		rep = nil // a short object: the request itself succeeded
	}
	r.report(start, firstErr(rep, cerr))
	if err == nil {
		err = cerr
	}
	if err == nil && want < int64(len(p)) {
		err = io.EOF
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// report tells the observer, if any, of one ranged GET.
func (r *rangeReaderAt) report(start time.Time, err error) {
	if r.observe != nil {
		r.observe("get", start, err)
	}
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
