package location

import (
	"net/url"
	"strings"
)

// anyAccount stands for the storage account of an azblob:// location, which
// names only the container (the account comes from the environment).
const anyAccount = "*"

// Canonical spells a table location or object URL the way object
// events are matched against the catalog: one scheme per store (s3a://,
// s3n:// → s3://; gcs:// → gs://; abfs[s]://container@account.dfs…,
// wasb[s]://container@account.blob… and azblob://container → az://account/container),
// bucket and account lower-cased, query dropped, percent-encoding of the path
// undone, repeated and trailing slashes removed (Normalize).
//
// The path comes out as the raw object key, which is what an event names,
// so a decoded path is not decoded again: Canonical is for locations
// written as URLs (the catalog's), ObjectRoot for a store and a raw key
// (an event's).
func Canonical(loc string) string { return canonical(loc, true) }

// ObjectRoot is Canonical for a store URL joined with a raw
// object key: nothing is percent-decoded, so a key holding a literal "%41"
// keeps it. It is idempotent.
func ObjectRoot(root string) string { return canonical(root, false) }

func canonical(loc string, decode bool) string {
	n := Normalize(loc)
	scheme, rest, ok := strings.Cut(n, "://")
	if !ok {
		return n // "s3:" names nothing; there is no bucket to spell
	}
	if scheme != "file" {
		// A query or fragment is not part of an object store path; a local
		// path may hold a literal '?'.
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
	}
	if decode {
		rest = unescapePath(rest)
	}
	// Cutting the query or decoding %2F can leave slashes to collapse.
	n = Normalize(scheme + "://" + rest)
	if scheme, rest, ok = strings.Cut(n, "://"); !ok {
		return n
	}
	if scheme == "file" {
		return n
	}
	// Mapping the scheme can leave an empty account or container
	// ("abfs://@/t"); normalise the result so it is a fixed point.
	return Normalize(storeForm(scheme, rest))
}

// storeForm maps scheme://host/path of a normalised location to the one
// scheme per store that events are matched in.
func storeForm(scheme, rest string) string {
	host, p, _ := strings.Cut(rest, "/")
	switch scheme = unalias(scheme); scheme {
	case "gcs":
		scheme = "gs"
	case "abfss", "wasb", "wasbs":
		container, account, ok := strings.Cut(host, "@")
		if !ok {
			return "az://" + anyAccount + "/" + join(container, p)
		}
		account, _, _ = strings.Cut(account, ".")
		return "az://" + strings.ToLower(account) + "/" + join(container, p)
	case "azblob":
		return "az://" + anyAccount + "/" + join(host, p)
	case "az":
		return "az://" + join(strings.ToLower(host), p)
	}
	return scheme + "://" + join(strings.ToLower(host), p)
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + "/" + b
}

// unescapePath undoes percent-encoding where it is valid.
func unescapePath(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// Index maps canonical table roots (Canonical) to table names. The zero
// value is not usable: make one with make(Index) or Index{}.
type Index map[string][]string

// Add records that table lives at root.
func (ix Index) Add(root, table string) {
	for _, t := range ix[root] {
		if t == table {
			return
		}
	}
	ix[root] = append(ix[root], table)
}

// Remove forgets that table lives at root.
func (ix Index) Remove(root, table string) {
	ts := ix[root]
	for i, t := range ts {
		if t == table {
			ts = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(ix, root)
	} else {
		ix[root] = ts
	}
}

// Lookup returns the tables at a canonical root; an Azure root also matches
// tables registered with an azblob:// location (any account).
func (ix Index) Lookup(root string) []string {
	out := ix[root]
	if rest, ok := strings.CutPrefix(root, "az://"); ok {
		if _, p, ok := strings.Cut(rest, "/"); ok {
			out = append(out[:len(out):len(out)], ix["az://"+anyAccount+"/"+p]...)
		}
	}
	return out
}
