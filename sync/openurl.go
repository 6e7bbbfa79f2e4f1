package sync

import (
	"strings"
	"unique"
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

// keepURL returns openURL as an openedURL that shares its base with loc
// when they are the same string, and its query with the other tables of
// its bucket: interned with unique.Make, as deltalog interns a snapshot's
// strings, so a query no table uses any more is dropped by the collector.
// A URL without a query is kept as it is (Resolve already reuses the
// location's string when the URL spells the same).
func keepURL(openURL, loc string) openedURL {
	base, query, ok := strings.Cut(openURL, "?")
	if !ok {
		return openedURL{base: openURL}
	}
	if base == loc {
		base = loc
	} else {
		base = strings.Clone(base) // not a substring pinning openURL
	}
	return openedURL{base: base, query: unique.Make(query).Value()}
}
