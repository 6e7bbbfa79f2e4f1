package location

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Location is a catalog-supplied location, checked and normalised (Parse):
// Scheme is s3 (also for s3a and s3n), gs, azblob, abfss (also for abfs)
// or file; Bucket the bucket, container, or for abfss
// "container@account.dfs.core.windows.net"; Path the key prefix ("" or
// "/a/b", no trailing slash, no "." or ".." segments).
type Location struct {
	Scheme, Bucket, Path string
}

// String is the normalised location, scheme://bucket/path.
func (l Location) String() string { return l.Scheme + "://" + l.Bucket + l.Path }

var (
	// bucketNameChars is a bucket name's characters; validBucket bounds its
	// length apart: `{0,254}` in the expression compiled 254 nested
	// optional steps at every start-up (2 ms and 240 kB of init).
	bucketNameChars = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	abfsHost        = regexp.MustCompile(`^[a-z0-9]{3,24}\.(dfs|blob)\.core\.windows\.net$`)
)

// Parse checks and normalises a location as the catalog
// stores it. It refuses what deltasync will not pass to a storage driver:
// query parameters (driver options), fragments, user info other than an
// abfss container, ports, relative paths, "." and ".." segments, and
// schemes other than s3, s3a, s3n, gs, azblob, abfs, abfss and file.
// "file:/p", "file:///p" and "/p" are the same local path.
func Parse(raw string) (Location, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Location{}, fmt.Errorf("empty location")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return Location{}, fmt.Errorf("control character or backslash in location")
		}
	}
	if strings.HasPrefix(s, "/") {
		s = "file://" + s
	}
	if strings.ContainsAny(s, "?#") {
		return Location{}, fmt.Errorf("query parameters and fragments are not accepted from the catalog (driver options come from storage.buckets)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("not a URL")
	}
	scheme, ok := canonicalScheme(u.Scheme)
	if !ok {
		return Location{}, fmt.Errorf("scheme %q is not supported", u.Scheme)
	}
	if u.Opaque != "" {
		return Location{}, fmt.Errorf("relative path")
	}
	l := Location{Scheme: scheme}
	host := strings.ToLower(u.Host)
	switch scheme {
	case "file":
		if u.User != nil || (host != "" && host != "localhost") {
			return Location{}, fmt.Errorf("file location with a host; want file:///absolute/path")
		}
	case "abfss":
		if u.User == nil || u.User.Username() == "" || func() bool { _, ok := u.User.Password(); return ok }() {
			return Location{}, fmt.Errorf("want abfss://container@account.dfs.core.windows.net/path")
		}
		if !abfsHost.MatchString(host) || !validBucket(u.User.Username()) {
			return Location{}, fmt.Errorf("want abfss://container@account.dfs.core.windows.net/path")
		}
		l.Bucket = u.User.Username() + "@" + host
	default:
		if u.User != nil {
			return Location{}, fmt.Errorf("user info is not accepted in a location")
		}
		if !validBucket(host) {
			return Location{}, fmt.Errorf("bucket %q: want a plain bucket name (no port, no user)", u.Host)
		}
		l.Bucket = host
	}
	p := collapseSlashes("/" + u.Path)
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return Location{}, fmt.Errorf("%q segments are not accepted", seg)
		}
	}
	l.Path = strings.TrimRight(p, "/")
	if scheme == "file" && l.Path == "" {
		l.Path = "/"
	}
	return l, nil
}

// canonicalScheme is the scheme a location or pattern is matched under
// (lower case; the Hadoop aliases s3a, s3n and abfs as s3 and abfss); ok is
// false for a scheme the policy does not know.
func canonicalScheme(scheme string) (string, bool) {
	s := unalias(strings.ToLower(scheme))
	switch s {
	case "s3", "gs", "azblob", "abfss", "file":
		return s, true
	}
	return "", false
}

// hadoopAliases are the Hadoop spellings Spark and Databricks write for the
// same store: the one table of scheme aliases Parse, ParsePattern and
// Canonical share.
// validBucket reports whether name is 1-255 lower-case letters, digits,
// '.', '_' or '-', starting with a letter or digit.
func validBucket(name string) bool {
	return len(name) <= 255 && bucketNameChars.MatchString(name)
}

var hadoopAliases = map[string]string{"s3a": "s3", "s3n": "s3", "abfs": "abfss"}

// unalias maps a lower-case Hadoop scheme alias to its plain scheme.
func unalias(scheme string) string {
	if s, ok := hadoopAliases[scheme]; ok {
		return s
	}
	return scheme
}
