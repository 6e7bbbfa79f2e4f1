package sync

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The catalog names where each table lives, but anyone who may create or
// alter an external table can write any location there. deltasync reads
// with its own credentials, so a location is a request the catalog makes of
// the daemon: StoragePolicy decides which ones are honoured. A location is
// checked before any storage request; driver options (endpoint, region,
// path style, account) come only from deltasync's own configuration, never
// from the location.

// DefaultAllowedLocations is the allow-list when none is configured: the
// cloud object stores, any bucket. Local paths (file://) must be listed
// explicitly.
var DefaultAllowedLocations = []string{"s3://*/**", "gs://*/**", "azblob://*/**", "abfss://*/**"}

// BucketOptions are the gocloud URL parameters (endpoint, region,
// use_path_style, storage_account, ...) used to open one bucket or
// container, named as scheme://bucket.
type BucketOptions struct {
	Location string
	Options  map[string]string
}

// StoragePolicy says which storage locations may be read and how each
// bucket is opened. The zero value and nil mean DefaultAllowedLocations
// with no bucket options.
type StoragePolicy struct {
	allowed []locationPattern
	buckets map[string]url.Values // "s3://bkt" → driver parameters
}

// locationPattern is one parsed allow-list entry.
type locationPattern struct {
	raw    string
	scheme string
	bucket string   // path.Match glob
	segs   []string // path.Match globs; "**" matches any number of segments
}

// bucketOptionNames are the driver parameters accepted per scheme.
var bucketOptionNames = map[string][]string{
	"s3":     {"region", "endpoint", "use_path_style", "s3ForcePathStyle", "disable_https", "dualstack", "fips", "accelerate", "profile", "role", "awssdk", "anonymous", "hostname_immutable", "rate_limiter_capacity", "request_checksum_calculation", "response_checksum_validation"},
	"gs":     {"anonymous", "access_id", "private_key_path"},
	"azblob": {"storage_account", "domain", "protocol", "localemu", "cdn"},
	"abfss":  {"domain", "protocol", "localemu", "cdn"},
}

// NewStoragePolicy parses the allow-list (nil: DefaultAllowedLocations) and
// the per-bucket options. Every problem is reported at once.
func NewStoragePolicy(allowed []string, buckets []BucketOptions) (*StoragePolicy, error) {
	if allowed == nil {
		allowed = DefaultAllowedLocations
	}
	p := &StoragePolicy{buckets: map[string]url.Values{}}
	var errs []string
	for _, a := range allowed {
		lp, err := parsePattern(a)
		if err != nil {
			errs = append(errs, fmt.Sprintf("storage.allowed_locations %q: %v", a, err))
			continue
		}
		p.allowed = append(p.allowed, lp)
	}
	for i, b := range buckets {
		key, names, err := bucketKey(b.Location)
		if err != nil {
			errs = append(errs, fmt.Sprintf("storage.buckets[%d].location %q: %v", i, b.Location, err))
			continue
		}
		if _, dup := p.buckets[key]; dup {
			errs = append(errs, fmt.Sprintf("storage.buckets[%d].location %q: listed twice", i, b.Location))
			continue
		}
		q := url.Values{}
		keys := make([]string, 0, len(b.Options))
		for k := range b.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !contains(names, k) {
				errs = append(errs, fmt.Sprintf("storage.buckets[%d].options.%s: unknown for %s (want one of %s)",
					i, k, key, strings.Join(names, ", ")))
				continue
			}
			q.Set(k, b.Options[k])
		}
		p.buckets[key] = q
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bucketKey checks a storage.buckets[] location (scheme://bucket, no path)
// and returns its key and the option names its scheme accepts.
func bucketKey(loc string) (string, []string, error) {
	l, err := ParseStorageLocation(loc)
	if err != nil {
		return "", nil, err
	}
	if l.Scheme == "file" {
		return "", nil, fmt.Errorf("file locations take no options")
	}
	if l.Path != "" {
		return "", nil, fmt.Errorf("want scheme://bucket without a path")
	}
	return l.Scheme + "://" + l.Bucket, bucketOptionNames[l.Scheme], nil
}

// StorageLocation is a catalog-supplied location, checked and normalised:
// Scheme is s3 (also for s3a and s3n), gs, azblob, abfss (also for abfs)
// or file; Bucket the bucket, container, or for abfss
// "container@account.dfs.core.windows.net"; Path the key prefix ("" or
// "/a/b", no trailing slash, no "." or ".." segments).
type StorageLocation struct {
	Scheme, Bucket, Path string
}

// String is the normalised location, scheme://bucket/path.
func (l StorageLocation) String() string { return l.Scheme + "://" + l.Bucket + l.Path }

var (
	bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,254}$`)
	abfsHost   = regexp.MustCompile(`^[a-z0-9]{3,24}\.(dfs|blob)\.core\.windows\.net$`)
)

// ParseStorageLocation checks and normalises a location as the catalog
// stores it. It refuses what deltasync will not pass to a storage driver:
// query parameters (driver options), fragments, user info other than an
// abfss container, ports, relative paths, "." and ".." segments, and
// schemes other than s3, s3a, s3n, gs, azblob, abfs, abfss and file.
// "file:/p", "file:///p" and "/p" are the same local path.
func ParseStorageLocation(raw string) (StorageLocation, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return StorageLocation{}, fmt.Errorf("empty location")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return StorageLocation{}, fmt.Errorf("control character or backslash in location")
		}
	}
	if strings.HasPrefix(s, "/") {
		s = "file://" + s
	}
	if strings.ContainsAny(s, "?#") {
		return StorageLocation{}, fmt.Errorf("query parameters and fragments are not accepted from the catalog (driver options come from storage.buckets)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return StorageLocation{}, fmt.Errorf("not a URL")
	}
	scheme, ok := canonicalScheme(u.Scheme)
	if !ok {
		return StorageLocation{}, fmt.Errorf("scheme %q is not supported", u.Scheme)
	}
	if u.Opaque != "" {
		return StorageLocation{}, fmt.Errorf("relative path")
	}
	l := StorageLocation{Scheme: scheme}
	host := strings.ToLower(u.Host)
	switch scheme {
	case "file":
		if u.User != nil || (host != "" && host != "localhost") {
			return StorageLocation{}, fmt.Errorf("file location with a host; want file:///absolute/path")
		}
	case "abfss":
		if u.User == nil || u.User.Username() == "" || func() bool { _, ok := u.User.Password(); return ok }() {
			return StorageLocation{}, fmt.Errorf("want abfss://container@account.dfs.core.windows.net/path")
		}
		if !abfsHost.MatchString(host) || !bucketName.MatchString(u.User.Username()) {
			return StorageLocation{}, fmt.Errorf("want abfss://container@account.dfs.core.windows.net/path")
		}
		l.Bucket = u.User.Username() + "@" + host
	default:
		if u.User != nil {
			return StorageLocation{}, fmt.Errorf("user info is not accepted in a location")
		}
		if !bucketName.MatchString(host) {
			return StorageLocation{}, fmt.Errorf("bucket %q: want a plain bucket name (no port, no user)", u.Host)
		}
		l.Bucket = host
	}
	p := collapseSlashes("/" + u.Path)
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return StorageLocation{}, fmt.Errorf("%q segments are not accepted", seg)
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
	switch s := strings.ToLower(scheme); s {
	case "s3a", "s3n":
		return "s3", true
	case "abfs":
		return "abfss", true
	case "s3", "gs", "azblob", "abfss", "file":
		return s, true
	}
	return "", false
}

// parsePattern parses an allow-list entry: scheme://bucket-glob/segment-globs,
// "**" standing for any number of segments. Hadoop aliases (s3a, abfs)
// and the file:/ forms are accepted as for locations.
func parsePattern(raw string) (locationPattern, error) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, "/") {
		s = "file://" + s
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return locationPattern{}, fmt.Errorf("want scheme://bucket/prefix/** or file:///dir/**")
	}
	canon, ok := canonicalScheme(scheme)
	if !ok {
		return locationPattern{}, fmt.Errorf("scheme %q is not supported", strings.ToLower(scheme))
	}
	scheme = canon
	if strings.ContainsAny(rest, "?#\\") {
		return locationPattern{}, fmt.Errorf("no query, fragment or backslash")
	}
	lp := locationPattern{raw: raw, scheme: scheme}
	var p string
	if scheme == "file" {
		p = rest
	} else {
		if !strings.HasPrefix(rest, "//") {
			return locationPattern{}, fmt.Errorf("want %s://bucket/<path>", scheme)
		}
		lp.bucket, p, _ = strings.Cut(rest[2:], "/")
		lp.bucket = strings.ToLower(lp.bucket)
		if lp.bucket == "" {
			return locationPattern{}, fmt.Errorf("no bucket (use * for any)")
		}
		if _, err := path.Match(lp.bucket, ""); err != nil {
			return locationPattern{}, err
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			continue
		case ".", "..":
			return locationPattern{}, fmt.Errorf("%q segments are not accepted", seg)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return locationPattern{}, err
		}
		lp.segs = append(lp.segs, seg)
	}
	return lp, nil
}

// match reports whether l lies under the pattern.
func (lp locationPattern) match(l StorageLocation) bool {
	if lp.scheme != l.Scheme {
		return false
	}
	if ok, _ := path.Match(lp.bucket, l.Bucket); !ok {
		return false
	}
	var segs []string
	if p := strings.Trim(l.Path, "/"); p != "" {
		segs = strings.Split(p, "/")
	}
	return matchSegs(lp.segs, segs)
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// LocationError is a catalog location the policy refuses. Its message is
// the same whether or not anything exists there.
type LocationError struct {
	Location string // as the catalog gave it, query dropped
	Reason   string
}

func (e *LocationError) Error() string {
	return fmt.Sprintf("storage location %s refused, not read: %s", e.Location, e.Reason)
}

// printable drops anything after ? or # (which may carry secrets) for messages.
func printable(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i] + "?…"
	}
	return raw
}

// Resolve checks a catalog location against the policy. It returns the
// normalised location and the URL to open it with (driver options from
// storage.buckets), or a *LocationError. It makes no storage request; for a
// file location it resolves symlinks in the path and checks the real
// directory too, so an allowed path cannot lead elsewhere.
func (p *StoragePolicy) Resolve(raw string) (StorageLocation, string, error) {
	if p == nil || p.allowed == nil {
		p = defaultPolicy
	}
	l, err := ParseStorageLocation(raw)
	if err != nil {
		return StorageLocation{}, "", &LocationError{Location: printable(raw), Reason: err.Error()}
	}
	if !p.allows(l) {
		return StorageLocation{}, "", &LocationError{Location: l.String(), Reason: "outside storage.allowed_locations"}
	}
	u := url.URL{Scheme: l.Scheme, Host: l.Bucket, Path: l.Path}
	switch l.Scheme {
	case "file":
		resolved, err := filepath.EvalSymlinks(filepath.FromSlash(l.Path))
		if err == nil {
			rl := StorageLocation{Scheme: "file", Path: filepath.ToSlash(resolved)}
			if !p.allows(rl) {
				return StorageLocation{}, "", &LocationError{Location: l.String(), Reason: "a symlink leads outside storage.allowed_locations"}
			}
			u.Path = rl.Path
		}
		u.Host = ""
		return l, sameOr(raw, u.String()), nil
	case "abfss":
		container, host, _ := strings.Cut(l.Bucket, "@")
		account, _, _ := strings.Cut(host, ".")
		q := url.Values{"storage_account": {account}}
		for k, v := range p.buckets[l.Scheme+"://"+l.Bucket] {
			q[k] = v
		}
		u = url.URL{Scheme: "azblob", Host: container, Path: l.Path, RawQuery: q.Encode()}
		return l, u.String(), nil
	}
	u.RawQuery = p.buckets[l.Scheme+"://"+l.Bucket].Encode()
	return l, sameOr(raw, u.String()), nil
}

// sameOr returns raw when s spells the same: the URL a table is opened at
// is kept for as long as the table is, and mostly it is the catalog's
// location itself, which the table's state keeps anyway.
func sameOr(raw, s string) string {
	if s == raw {
		return raw
	}
	return s
}

func (p *StoragePolicy) allows(l StorageLocation) bool {
	for _, lp := range p.allowed {
		if lp.match(l) {
			return true
		}
	}
	return false
}

var defaultPolicy = func() *StoragePolicy {
	p, err := NewStoragePolicy(nil, nil)
	if err != nil {
		panic(err)
	}
	return p
}()

// refused returns err as a flagged problem when it is a *LocationError
// (the location is reported, not read), else nil.
func refused(err error) error {
	var le *LocationError
	if !errors.As(err, &le) {
		return nil
	}
	return flagged(ReasonLocation, le)
}
