package deltalog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/deltasync/deltasync/internal/redact"
)

// This file lists directories for discovery: finding the tables that live
// under a location template (sync's register rules) takes one delimiter
// LIST per template level, never a recursive walk of the bucket. Whether a
// directory found this way holds a Delta table is answered by opening it
// and calling Load (ErrNotATable when its _delta_log holds no commit).

// DefaultListPageSize is the page size of ListDirs when none is given: the
// most S3 returns in one ListObjectsV2 page.
const DefaultListPageSize = 1000

// ErrListingUnbounded means a store's directory listing broke a bound
// ListDirs sets on it: a page token repeated, more pages or names than
// any directory of tables has, or a long run of pages that bring no new
// name. A store that pages forever (a bug, a hostile proxy) ends with it
// instead of listing until killed.
var ErrListingUnbounded = errors.New("deltalog: directory listing does not end")

// listDirsBounds bound one ListDirs: pages in all, names handed on, and
// consecutive pages that bring no new name (a store may report a common
// prefix on every page over the objects under it: gofakes3 does).
type listDirsBounds struct{ pages, names, idlePages int }

// defaultListDirsBounds: 100,000 pages (100 million entries at S3's 1,000
// a page), a million directories, 1,000 pages in a row without a new one
// (a million objects under directories already seen).
var defaultListDirsBounds = listDirsBounds{pages: 100_000, names: 1_000_000, idlePages: 1_000}

func (b listDirsBounds) orDefault() listDirsBounds {
	d := defaultListDirsBounds
	if b.pages > 0 {
		d.pages = b.pages
	}
	if b.names > 0 {
		d.names = b.names
	}
	if b.idlePages > 0 {
		d.idlePages = b.idlePages
	}
	return d
}

// ListDirs calls fn with the names of the immediate subdirectories of the
// directory at rawURL, page by page, in key order: one LIST with delimiter
// "/", one request per page of at most pageSize entries (0:
// DefaultListPageSize). Objects directly in the directory are ignored, and
// so is a "_delta_log" subdirectory (the directory is itself a table, not a
// parent of tables). A directory that does not exist has no subdirectories.
// Each page is reported to the observer as one "list" and is sent under
// the bucket's in-flight gate, as a Table's requests are. Each name is
// handed to fn once. URL forms and
// options are Open's; fn returning an error stops the listing with it.
// A listing that breaks its bounds (ErrListingUnbounded) stops with a
// LogError saying which.
func ListDirs(ctx context.Context, rawURL string, pageSize int, fn func(names []string) error, opts ...Option) error {
	o := applyOptions(opts)
	rawURL = hadoopFile(rawURL)
	st, name, err := openStore(ctx, rawURL, o.creds, true)
	if err != nil {
		if isMissingLocalDir(err) {
			return nil
		}
		return &LogError{Op: "list", Table: redact.Location(rawURL), Version: -1, Err: classifyStoreError(err)}
	}
	if !st.shared {
		defer st.b.Close()
	}
	var gate *bucketGate
	if k := gateKey(rawURL); k != "" {
		g := o.gates
		if g == nil {
			g = defaultGates
		}
		gate = g.gate(k)
	}
	if pageSize <= 0 {
		pageSize = DefaultListPageSize
	}
	lo := &blob.ListOptions{Prefix: st.prefix, Delimiter: "/"}
	// A store may report one common prefix on several pages (gofakes3
	// pages over the objects under it): each name is handed on once.
	seen := map[string]bool{}
	bounds := o.listBounds.orDefault()
	tokens := map[[sha256.Size]byte]bool{} // digests: a token's size is the store's to choose
	unbounded := func(format string, args ...any) error {
		return &LogError{Op: "list", Table: name, Version: -1, Err: fmt.Errorf("%w: "+format, append([]any{ErrListingUnbounded}, args...)...)}
	}
	token := blob.FirstPageToken
	for page, idle := 1, 0; len(token) > 0; page++ {
		if page > bounds.pages {
			return unbounded("more than %d pages", bounds.pages)
		}
		start := time.Now()
		var objs []*blob.ListObject
		var next []byte
		err := gate.do(ctx, func() (err error) {
			objs, next, err = st.b.ListPage(ctx, token, pageSize, lo)
			return err
		})
		o.observe("list", start, err)
		if err != nil {
			return &LogError{Op: "list", Table: name, Version: -1, Err: classifyStoreError(err)}
		}
		names := make([]string, 0, len(objs))
		for _, obj := range objs {
			if !obj.IsDir {
				continue
			}
			n := strings.TrimSuffix(strings.TrimPrefix(obj.Key, st.prefix), "/")
			if n == "" || n == "_delta_log" || strings.Contains(n, "/") || seen[n] {
				continue
			}
			seen[n] = true
			names = append(names, n)
		}
		if len(seen) > bounds.names {
			return unbounded("more than %d directories", bounds.names)
		}
		if idle++; len(names) > 0 {
			idle = 0
			if err := fn(names); err != nil {
				return err
			}
		}
		if idle >= bounds.idlePages {
			return unbounded("%d pages in a row without a new directory", idle)
		}
		if len(next) > 0 {
			d := sha256.Sum256(next)
			if tokens[d] {
				return unbounded("page %d's next token was given before: the store pages in a circle", page)
			}
			tokens[d] = true
		}
		token = next
	}
	return nil
}

// isMissingLocalDir reports whether openStore failed because a local
// directory does not exist (tableDir's ErrNotATable).
func isMissingLocalDir(err error) bool { return errors.Is(err, ErrNotATable) }
