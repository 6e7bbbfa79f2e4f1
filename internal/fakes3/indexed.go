// Package fakes3 is test infrastructure: a gofakes3 backend whose LIST
// costs what a real S3 LIST costs, for benchmarks of fleets on S3.
//
// gofakes3's in-memory backend (s3mem) answers a prefixed LIST by walking
// every key after the start (or start-after) key to the end of the bucket,
// skipping the ones outside the prefix, so one LIST of one table's
// _delta_log in a bucket of N tables costs O(N) and a steady cycle over
// the fleet O(N²): at 10,000 tables the fake, not the client, is what a
// benchmark would measure. Real S3 answers from an index. Indexed keeps a
// sorted index of each bucket's keys beside s3mem and answers ListBucket
// from it (binary search to max(prefix, marker), stop at the end of the
// prefix); every other call is s3mem's.
package fakes3

import (
	"crypto/md5"
	"io"
	"sort"
	"strings"
	stdsync "sync"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Indexed is an s3mem backend with an indexed ListBucket. Versioning is
// not supported (the benchmarks do not use it).
type Indexed struct {
	*s3mem.Backend

	mu      stdsync.RWMutex
	buckets map[string]*index
}

type entry struct {
	size  int64
	hash  []byte
	mtime time.Time
}

type index struct {
	keys    []string // sorted
	entries map[string]entry
}

// NewIndexed returns an empty backend.
func NewIndexed() *Indexed {
	return &Indexed{Backend: s3mem.New(), buckets: map[string]*index{}}
}

// CreateBucket creates the bucket and its index.
func (b *Indexed) CreateBucket(name string) error {
	if err := b.Backend.CreateBucket(name); err != nil {
		return err
	}
	b.mu.Lock()
	b.buckets[name] = &index{entries: map[string]entry{}}
	b.mu.Unlock()
	return nil
}

// PutObject stores the object and indexes its key, size, MD5 and time.
func (b *Indexed) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64, cond *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	h := md5.New()
	res, err := b.Backend.PutObject(bucket, key, meta, io.TeeReader(input, h), size, cond)
	if err != nil {
		return res, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ix := b.buckets[bucket]; ix != nil {
		if _, ok := ix.entries[key]; !ok {
			i := sort.SearchStrings(ix.keys, key)
			ix.keys = append(ix.keys, "")
			copy(ix.keys[i+1:], ix.keys[i:])
			ix.keys[i] = key
		}
		ix.entries[key] = entry{size: size, hash: h.Sum(nil), mtime: time.Now()}
	}
	return res, nil
}

// DeleteObject deletes the object and its index entry.
func (b *Indexed) DeleteObject(bucket, key string) (gofakes3.ObjectDeleteResult, error) {
	res, err := b.Backend.DeleteObject(bucket, key)
	if err == nil {
		b.unindex(bucket, key)
	}
	return res, err
}

// DeleteMulti deletes the objects and their index entries.
func (b *Indexed) DeleteMulti(bucket string, keys ...string) (gofakes3.MultiDeleteResult, error) {
	res, err := b.Backend.DeleteMulti(bucket, keys...)
	for _, d := range res.Deleted {
		b.unindex(bucket, d.Key)
	}
	return res, err
}

func (b *Indexed) unindex(bucket, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ix := b.buckets[bucket]
	if ix == nil {
		return
	}
	if _, ok := ix.entries[key]; !ok {
		return
	}
	delete(ix.entries, key)
	i := sort.SearchStrings(ix.keys, key)
	ix.keys = append(ix.keys[:i], ix.keys[i+1:]...)
}

// ListBucket answers from the index: keys after max(prefix, marker) that
// start with the prefix, with common prefixes under a delimiter, at most
// page.MaxKeys entries (keys and common prefixes) per page.
func (b *Indexed) ListBucket(name string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	ix := b.buckets[name]
	if ix == nil {
		return nil, gofakes3.BucketNotFound(name)
	}
	var p, delim string
	if prefix != nil {
		if prefix.HasPrefix {
			p = prefix.Prefix
		}
		if prefix.HasDelimiter {
			delim = prefix.Delimiter
		}
	}
	i := sort.SearchStrings(ix.keys, p)
	if page.Marker != "" && page.Marker >= p {
		i = sort.SearchStrings(ix.keys, page.Marker)
		if i < len(ix.keys) && ix.keys[i] == page.Marker {
			i++
		}
	}
	out := gofakes3.NewObjectList()
	var n int64
	var marker string
	for ; i < len(ix.keys); i++ {
		key := ix.keys[i]
		if !strings.HasPrefix(key, p) {
			break
		}
		if page.MaxKeys > 0 && n >= page.MaxKeys {
			out.IsTruncated = true
			break
		}
		if delim != "" {
			if j := strings.Index(key[len(p):], delim); j >= 0 {
				// One common prefix stands for all its keys: skip to
				// its last key, which is the next page's marker.
				cp := key[:len(p)+j+len(delim)]
				out.AddPrefix(cp)
				for i+1 < len(ix.keys) && strings.HasPrefix(ix.keys[i+1], cp) {
					i++
				}
				marker = ix.keys[i]
				n++
				continue
			}
		}
		e := ix.entries[key]
		out.Add(&gofakes3.Content{Key: key, LastModified: gofakes3.NewContentTime(e.mtime),
			ETag: gofakes3.FormatETag(e.hash), Size: e.size})
		marker = key
		n++
	}
	if out.IsTruncated {
		out.NextMarker = marker // set only then: gofakes3 pages on any marker
	}
	return out, nil
}
