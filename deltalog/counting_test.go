package deltalog

import (
	"context"
	"io"
	stdsync "sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// countingBucket is a driver.Bucket that forwards to a *blob.Bucket and
// records every LIST page and every GET (whole or ranged read) by key, so
// tests can assert request budgets.
type countingBucket struct {
	b  *blob.Bucket
	mu stdsync.Mutex
	// lists counts LIST pages; gets records the key of every read.
	lists int
	gets  []string
	heads int
	// bytes counts the bytes read from each key.
	bytes map[string]int64
	// latency, when set, is slept before each request is answered (a
	// round trip to a store; see TestLoadRoundTrips).
	latency time.Duration
}

// wait sleeps the request's latency, if any.
func (c *countingBucket) wait() {
	if c.latency > 0 {
		time.Sleep(c.latency)
	}
}

// newCountingBucket wraps b; the returned *blob.Bucket owns nothing.
func newCountingBucket(b *blob.Bucket) (*blob.Bucket, *countingBucket) {
	c := &countingBucket{b: b}
	return blob.NewBucket(c), c
}

// reset forgets the requests seen so far.
func (c *countingBucket) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists, c.gets, c.heads, c.bytes = 0, nil, 0, nil
}

// bytesRead returns the bytes read from key since the last reset.
func (c *countingBucket) bytesRead(key string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes[key]
}

// counts returns the LIST count and the keys read.
func (c *countingBucket) counts() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, append([]string(nil), c.gets...)
}

func (c *countingBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (c *countingBucket) As(i any) bool                          { return c.b.As(i) }
func (c *countingBucket) ErrorAs(err error, i any) bool          { return c.b.ErrorAs(err, i) }
func (c *countingBucket) Close() error                           { return nil }

func (c *countingBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	c.mu.Lock()
	c.heads++
	c.mu.Unlock()
	c.wait()
	a, err := c.b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ModTime: a.ModTime, Size: a.Size, ETag: a.ETag}, nil
}

func (c *countingBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	c.wait()
	size := opts.PageSize
	if size <= 0 {
		size = 1000
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := c.b.ListPage(ctx, token, size, &blob.ListOptions{
		Prefix: opts.Prefix, Delimiter: opts.Delimiter, BeforeList: opts.BeforeList,
	})
	if err != nil && err != io.EOF {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, IsDir: o.IsDir})
	}
	return page, nil
}

func (c *countingBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	c.mu.Lock()
	c.gets = append(c.gets, key)
	c.mu.Unlock()
	c.wait()
	r, err := c.b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return &countingReader{r: r, c: c, key: key}, nil
}

func (c *countingBucket) NewTypedWriter(ctx context.Context, key, contentType string, _ *driver.WriterOptions) (driver.Writer, error) {
	return c.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
}

func (c *countingBucket) Copy(ctx context.Context, dstKey, srcKey string, _ *driver.CopyOptions) error {
	return c.b.Copy(ctx, dstKey, srcKey, nil)
}

func (c *countingBucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return c.b.Delete(ctx, key)
}

func (c *countingBucket) SignedURL(ctx context.Context, key string, _ *driver.SignedURLOptions) (string, error) {
	return c.b.SignedURL(ctx, key, nil)
}

// countingReader adapts a *blob.Reader to driver.Reader, counting the
// bytes read.
type countingReader struct {
	r   *blob.Reader
	c   *countingBucket
	key string
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.c.mu.Lock()
	if r.c.bytes == nil {
		r.c.bytes = map[string]int64{}
	}
	r.c.bytes[r.key] += int64(n)
	r.c.mu.Unlock()
	return n, err
}
func (r *countingReader) Close() error  { return r.r.Close() }
func (r *countingReader) As(i any) bool { return r.r.As(i) }
func (r *countingReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}
