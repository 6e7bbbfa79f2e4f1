package sync

import (
	"strings"
	stdsync "sync"
)

// openedURL is the URL a table's handle was opened at, kept as its part
// before the query and the query: base, or base + "?" + query. On an
// object store with storage.buckets options every table's URL is its
// location with the bucket's options appended, a string of its own per
// table (~110 bytes in the S3 scale benchmark) that the table's state
// kept for as long as the table was known. Kept split, base is the
// catalog's location string the state holds anyway, and query is one
// string per bucket, shared by its tables.
type openedURL struct {
	base, query string
}

// is reports whether u is openURL, exactly, without building it.
func (u openedURL) is(openURL string) bool {
	if u.query == "" {
		return u.base == openURL
	}
	n := len(u.base)
	return len(openURL) == n+1+len(u.query) && openURL[:n] == u.base && openURL[n] == '?' && openURL[n+1:] == u.query
}

// urlQueries interns the query parts of the URLs tables are opened at:
// one per bucket's options (and abfss account), a handful per Reconciler.
type urlQueries struct {
	mu stdsync.Mutex
	m  map[string]string
}

// maxURLQueries bounds what urlQueries keeps: past it a query is copied
// for its table alone, as before (a catalog naming many abfss accounts).
const maxURLQueries = 256

// keep returns openURL as an openedURL that shares its base with loc
// when they are the same string and its query with the other tables'.
// A URL without a query is kept as it is (Resolve already reuses the
// location's string when the URL spells the same).
func (q *urlQueries) keep(openURL, loc string) openedURL {
	base, query, ok := strings.Cut(openURL, "?")
	if !ok {
		return openedURL{base: openURL}
	}
	if base == loc {
		base = loc
	} else {
		base = strings.Clone(base) // not a substring pinning openURL
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if s, ok := q.m[query]; ok {
		return openedURL{base: base, query: s}
	}
	query = strings.Clone(query)
	if len(q.m) < maxURLQueries {
		if q.m == nil {
			q.m = map[string]string{}
		}
		q.m[query] = query
	}
	return openedURL{base: base, query: query}
}
