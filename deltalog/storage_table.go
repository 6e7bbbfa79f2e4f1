package deltalog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"gocloud.dev/blob"
)

// This file holds the storage requests of a Table on the bucket Open or
// NewTable gave it: whole GETs (get), LISTs of _delta_log/ (listObjects)
// and ranged reads for Parquet (readerAt). Turning a URL into a bucket is
// storage.go's job.
//
// The Table's storage requests go to its bucket directly and are reported
// to the observer here, at the call sites, rather than through a wrapping
// bucket: a wrapper is a second gocloud Bucket layer whose
// per-request cost (reader setup, tracing, copying) was a large share of a
// Load over a local directory. The reports are the same: one "list" per
// LIST page, one "get" per GET (whole or ranged read, from open to close)
// and per HEAD.

// errTooLarge: an object is larger than the most get may read of it.
var errTooLarge = errors.New("object larger than allowed")

// get reads the whole object at key (one GET) and reports it. An object
// of more than limit bytes is not read past limit+1 bytes: get returns
// errTooLarge.
func (t *Table) get(ctx context.Context, key string, limit int64) ([]byte, error) {
	if err := t.confine(key); err != nil {
		return nil, err
	}
	start := time.Now()
	var data []byte
	err := t.gate.do(ctx, func() (err error) {
		data, err = readFileLimited(ctx, t.bucket, t.prefix+key, limit)
		return err
	})
	t.opts.observe("get", start, err)
	if errors.Is(err, errTooLarge) {
		return nil, err
	}
	return data, classifyStoreError(err)
}

// readFileLimited reads the whole object at key (one GET) when it is at
// most limit bytes, else returns errTooLarge having read at most limit+1.
func readFileLimited(ctx context.Context, b *blob.Bucket, key string, limit int64) ([]byte, error) {
	r, err := b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", errTooLarge, r.Size(), limit)
	}
	data, err := readSized(io.LimitReader(r, limit+1), r.Size(), nil)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	return data, nil
}

// listObjects is listLogPages over the Table's bucket, reporting each page.
// A local table's log is listed by localRoot.listLog instead, one LIST as well.
func (t *Table) listObjects(ctx context.Context, startAfter string) ([]*blob.ListObject, error) {
	if t.root != nil {
		start := time.Now()
		objs, err := t.root.listLog(startAfter)
		t.opts.observe("list", start, err)
		return objs, err
	}
	objs, err := listLogPages(ctx, t.gate, t.bucket, t.prefix, startAfter, t.opts.observe)
	return objs, classifyStoreError(err)
}

// readerAt returns an io.ReaderAt over the object at key and its size, for
// Parquet readers. size is the object size if known (from the listing); a
// negative size is fetched with one HEAD. The HEAD and every ranged GET are
// reported.
func (t *Table) readerAt(ctx context.Context, key string, size int64) (*rangeReaderAt, int64, error) {
	if err := t.confine(key); err != nil {
		return nil, 0, err
	}
	if size < 0 {
		start := time.Now()
		var attrs *blob.Attributes
		err := t.gate.do(ctx, func() (err error) {
			attrs, err = t.bucket.Attributes(ctx, t.prefix+key)
			return err
		})
		t.opts.observe("get", start, err)
		if err != nil {
			return nil, 0, classifyStoreError(err)
		}
		size = attrs.Size
	}
	return &rangeReaderAt{ctx: ctx, b: t.bucket, gate: t.gate, key: t.prefix + key, size: size, observe: t.opts.observe}, size, nil
}

// listLogPages lists the direct children of prefix + "_delta_log/" whose
// keys, without prefix, sort after startAfter ("" lists all), in key
// order; the keys it returns are without prefix. It is one LIST operation:
// one ListPage call per page of 1000, calling observe (when not nil) after
// each page. Subdirectories such as _staged_commits/ and _sidecars/ come
// back as single entries with IsDir set; their contents are not listed.
//
// startAfter is passed to the server as a hint where the driver has one
// (S3 StartAfter, GCS StartOffset, Azure StartFrom); fileblob and memblob
// walk the whole prefix anyway. Keys <= startAfter are always dropped here
// too, since some servers ignore the hint. Each page is one request under
// gate (nil: none).
//
// A store that pages forever ends with ErrListingUnbounded instead of
// listing until killed (or until memory runs out): a next-page token given
// before, more than logListBounds.pages pages, or logListBounds.idlePages
// pages in a row that bring no key after every key already seen. Keys a
// store repeats (on several pages, or twice on one) are returned once.
func listLogPages(ctx context.Context, gate *bucketGate, b *blob.Bucket, prefix, startAfter string, observe func(string, time.Time, error)) ([]*blob.ListObject, error) {
	return listLogPagesBounded(ctx, gate, b, prefix, startAfter, observe, logListBounds)
}

// logListBounds bound one LIST of a _delta_log/: 100,000 pages (100
// million entries at S3's 1,000 a page, far past any log a writer keeps,
// where a log directory of a million files is already rare), and 1,000
// pages in a row with no new key.
var logListBounds = listDirsBounds{pages: 100_000, idlePages: 1_000}

func listLogPagesBounded(ctx context.Context, gate *bucketGate, b *blob.Bucket, prefix, startAfter string, observe func(string, time.Time, error), bounds listDirsBounds) ([]*blob.ListObject, error) {
	opts := listLogOptions(prefix, startAfter)
	var out []*blob.ListObject
	tokens := map[[sha256.Size]byte]bool{} // digests: a token's size is the store's to choose
	// Not startAfter: a store that ignores the hint pages through the
	// older keys first, and those pages are progress too.
	maxKey := ""
	idle := 0
	token := blob.FirstPageToken
	for page := 1; len(token) > 0; page++ {
		if page > bounds.pages {
			return nil, fmt.Errorf("%w: more than %d pages", ErrListingUnbounded, bounds.pages)
		}
		start := time.Now()
		var objs []*blob.ListObject
		var next []byte
		err := gate.do(ctx, func() (err error) {
			objs, next, err = b.ListPage(ctx, token, 1000, opts)
			return err
		})
		if observe != nil {
			observe("list", start, err)
		}
		if err != nil {
			return nil, err
		}
		fresh := false
		for _, obj := range objs {
			obj.Key = strings.TrimPrefix(obj.Key, prefix)
			if obj.Key > startAfter {
				out = append(out, obj)
			}
			if obj.Key > maxKey {
				maxKey, fresh = obj.Key, true
			}
		}
		if idle++; fresh {
			idle = 0
		}
		if idle >= bounds.idlePages {
			return nil, fmt.Errorf("%w: %d pages in a row without a new key", ErrListingUnbounded, idle)
		}
		if len(next) > 0 {
			d := sha256.Sum256(next)
			if tokens[d] {
				return nil, fmt.Errorf("%w: page %d's next token was given before", ErrListingUnbounded, page)
			}
			tokens[d] = true
		}
		token = next
	}
	sortObjects(out)
	return dedupeSorted(out), nil
}

// dedupeSorted drops the repeats of a key from a sorted listing, keeping
// its first entry.
func dedupeSorted(objs []*blob.ListObject) []*blob.ListObject {
	if len(objs) < 2 {
		return objs
	}
	kept := objs[:1]
	for _, o := range objs[1:] {
		if o.Key != kept[len(kept)-1].Key {
			kept = append(kept, o)
		}
	}
	return kept
}

// listLogOptions are the LIST options of listLogPages.
func listLogOptions(prefix, startAfter string) *blob.ListOptions {
	opts := &blob.ListOptions{Prefix: prefix + logDir, Delimiter: "/"}
	if startAfter != "" && strings.HasPrefix(startAfter, logDir) {
		suffix := startAfter[len(logDir):]
		opts.BeforeList = func(as func(any) bool) error {
			hintStartAfter(as, opts.Prefix, suffix)
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

// maxPrealloc bounds the buffer allocated up front from a reader's
// reported size; a bigger object grows the buffer as it is read.
const maxPrealloc = 64 << 20

// readSized reads r to EOF into one buffer sized from size (the object's
// size, or negative when unknown): a small log file costs one allocation
// (none when buf has room) and two reads instead of io.ReadAll's doubling
// from 512 bytes.
func readSized(r io.Reader, size int64, buf []byte) ([]byte, error) {
	if size < 0 || size > maxPrealloc {
		size = 512
	}
	if int64(cap(buf)) > size {
		buf = buf[:0]
	} else {
		buf = getBuf(int(size) + 1)
	}
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// rangeReaderAt is an io.ReaderAt over one object: every ReadAt is one
// ranged GET. Nothing is cached between calls. It keeps the ctx it was made
// with, so it must not outlive the operation that made it.
type rangeReaderAt struct {
	ctx  context.Context
	b    *blob.Bucket
	key  string
	size int64
	gate *bucketGate // the bucket's in-flight limit and backoff (nil: none)
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
	var n int
	var err error // the read's own outcome (io.EOF on a short object)
	opened := false
	rep := r.gate.do(r.ctx, func() error {
		n, err, opened = 0, nil, false
		rd, oerr := r.b.NewRangeReader(r.ctx, r.key, off, want, nil)
		if oerr != nil {
			return oerr
		}
		opened = true
		n, err = io.ReadFull(rd, p[:want])
		cerr := rd.Close()
		rep := err
		if errors.Is(rep, io.EOF) || errors.Is(rep, io.ErrUnexpectedEOF) {
			rep = nil // a short object: the request itself succeeded
		}
		if err == nil {
			err = cerr
		}
		return firstErr(rep, cerr)
	})
	r.report(start, rep)
	if !opened {
		return 0, rep
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
