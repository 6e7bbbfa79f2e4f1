package deltalog

import (
	"context"
	"io"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// observeBucket returns a bucket that reports every LIST page and every GET
// (whole or ranged read, from open to close) made through it to obs. It
// returns b itself when obs is nil. The returned bucket owns b: closing it
// closes b.
func observeBucket(b *blob.Bucket, obs Observer) *blob.Bucket {
	if obs == nil {
		return b
	}
	return blob.NewBucket(&observedBucket{b: b, obs: obs})
}

// observedBucket is a driver.Bucket that forwards to a *blob.Bucket and
// times its requests. Errors keep their gocloud codes (ErrorCode returns the
// code of the wrapped error), so gcerrors.Code and errors.Is(os.ErrNotExist)
// style checks behave as on the underlying bucket.
type observedBucket struct {
	b   *blob.Bucket
	obs Observer
}

var _ driver.Bucket = (*observedBucket)(nil)

func (o *observedBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (o *observedBucket) As(i any) bool                          { return o.b.As(i) }
func (o *observedBucket) ErrorAs(err error, i any) bool          { return o.b.ErrorAs(err, i) }
func (o *observedBucket) Close() error                           { return o.b.Close() }

func (o *observedBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	start := time.Now()
	a, err := o.b.Attributes(ctx, key)
	o.obs("get", time.Since(start), err) // a HEAD; the contract knows only list and get
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{
		CacheControl:       a.CacheControl,
		ContentDisposition: a.ContentDisposition,
		ContentEncoding:    a.ContentEncoding,
		ContentLanguage:    a.ContentLanguage,
		ContentType:        a.ContentType,
		Metadata:           a.Metadata,
		CreateTime:         a.CreateTime,
		ModTime:            a.ModTime,
		Size:               a.Size,
		MD5:                a.MD5,
		ETag:               a.ETag,
		AsFunc:             a.As,
	}, nil
}

func (o *observedBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	start := time.Now()
	objs, next, err := o.b.ListPage(ctx, token, listPageSize(opts.PageSize), &blob.ListOptions{
		Prefix:     opts.Prefix,
		Delimiter:  opts.Delimiter,
		BeforeList: opts.BeforeList,
	})
	o.obs("list", time.Since(start), err)
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next, Objects: make([]*driver.ListObject, len(objs))}
	for i, obj := range objs {
		page.Objects[i] = &driver.ListObject{
			Key: obj.Key, ModTime: obj.ModTime, Size: obj.Size, MD5: obj.MD5, IsDir: obj.IsDir, AsFunc: obj.As,
		}
	}
	return page, nil
}

// listPageSize maps the driver's "0 = default" to blob's default.
func listPageSize(n int) int {
	if n <= 0 {
		return 1000
	}
	return n
}

func (o *observedBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	start := time.Now()
	var ro *blob.ReaderOptions
	if opts != nil {
		ro = &blob.ReaderOptions{BeforeRead: opts.BeforeRead}
	}
	r, err := o.b.NewRangeReader(ctx, key, offset, length, ro)
	if err != nil {
		o.obs("get", time.Since(start), err)
		return nil, err
	}
	return &observedReader{r: r, start: start, obs: o.obs}, nil
}

func (o *observedBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	wo := &blob.WriterOptions{ContentType: contentType}
	if opts != nil {
		wo.BufferSize, wo.CacheControl, wo.ContentDisposition = opts.BufferSize, opts.CacheControl, opts.ContentDisposition
		wo.ContentEncoding, wo.ContentLanguage, wo.ContentMD5 = opts.ContentEncoding, opts.ContentLanguage, opts.ContentMD5
		wo.Metadata, wo.BeforeWrite = opts.Metadata, opts.BeforeWrite
	}
	return o.b.NewWriter(ctx, key, wo)
}

func (o *observedBucket) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	var co *blob.CopyOptions
	if opts != nil {
		co = &blob.CopyOptions{BeforeCopy: opts.BeforeCopy}
	}
	return o.b.Copy(ctx, dstKey, srcKey, co)
}

func (o *observedBucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return o.b.Delete(ctx, key)
}

func (o *observedBucket) SignedURL(ctx context.Context, key string, opts *driver.SignedURLOptions) (string, error) {
	so := &blob.SignedURLOptions{}
	if opts != nil {
		so.Expiry, so.Method, so.ContentType = opts.Expiry, opts.Method, opts.ContentType
		so.EnforceAbsentContentType, so.BeforeSign = opts.EnforceAbsentContentType, opts.BeforeSign
	}
	return o.b.SignedURL(ctx, key, so)
}

// observedReader reports its GET when closed: duration from open to close
// and the first read error other than io.EOF.
type observedReader struct {
	r     *blob.Reader
	start time.Time
	obs   Observer
	err   error
	done  bool
}

func (r *observedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

func (r *observedReader) Close() error {
	err := r.r.Close()
	if !r.done {
		r.done = true
		rep := r.err
		if rep == nil {
			rep = err
		}
		r.obs("get", time.Since(r.start), rep)
	}
	return err
}

func (r *observedReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (r *observedReader) As(i any) bool { return r.r.As(i) }
