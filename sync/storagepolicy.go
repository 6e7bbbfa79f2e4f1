package sync

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/register"
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
	allowed []location.Pattern
	buckets map[string]url.Values // "s3://bkt" → driver parameters
}

// bucketOptionNames are the driver parameters accepted per scheme.
var bucketOptionNames = map[string][]string{
	"s3":     {"region", "endpoint", "use_path_style", "s3ForcePathStyle", "disable_https", "dualstack", "fips", "accelerate", "profile", "role", "awssdk", "anonymous", "hostname_immutable", "rate_limiter_capacity", "request_checksum_calculation", "response_checksum_validation"},
	"gs":     {"anonymous", "access_id", "private_key_path"},
	"azblob": {"storage_account", "domain", "protocol", "localemu", "cdn"},
	"abfss":  {"domain", "protocol", "localemu", "cdn"},
}

// PolicyError is a problem with one entry given to NewStoragePolicy: the
// pattern allowed[Index], or the bucket buckets[Index] (its Location, or,
// when Option is set, that option). The caller, which knows where the
// entries came from, names them (cmd: storage.allowed_locations,
// storage.buckets[i].location, storage.buckets[i].options.NAME).
type PolicyError struct {
	Bucket bool   // buckets[Index]; otherwise allowed[Index]
	Index  int    // the entry's position in its list
	Value  string // the pattern or bucket location as given
	Option string // the bucket option at fault ("": the entry itself)
	Err    error
}

func (e *PolicyError) Error() string {
	switch {
	case !e.Bucket:
		return fmt.Sprintf("allowed location %d %q: %v", e.Index, e.Value, e.Err)
	case e.Option != "":
		return fmt.Sprintf("bucket %d option %s: %v", e.Index, e.Option, e.Err)
	}
	return fmt.Sprintf("bucket %d location %q: %v", e.Index, e.Value, e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// NewStoragePolicy parses the allow-list (nil: DefaultAllowedLocations) and
// the per-bucket options. Every problem is reported at once, as
// *PolicyError values joined (errors.Join).
func NewStoragePolicy(allowed []string, buckets []BucketOptions) (*StoragePolicy, error) {
	if allowed == nil {
		allowed = DefaultAllowedLocations
	}
	p := &StoragePolicy{buckets: map[string]url.Values{}}
	var errs []error
	for i, a := range allowed {
		lp, err := location.ParsePattern(a)
		if err != nil {
			errs = append(errs, &PolicyError{Index: i, Value: a, Err: err})
			continue
		}
		p.allowed = append(p.allowed, lp)
	}
	for i, b := range buckets {
		key, names, err := bucketKey(b.Location)
		if err != nil {
			errs = append(errs, &PolicyError{Bucket: true, Index: i, Value: b.Location, Err: err})
			continue
		}
		if _, dup := p.buckets[key]; dup {
			errs = append(errs, &PolicyError{Bucket: true, Index: i, Value: b.Location, Err: errors.New("listed twice")})
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
				errs = append(errs, &PolicyError{Bucket: true, Index: i, Value: b.Location, Option: k,
					Err: fmt.Errorf("unknown for %s (want one of %s)", key, strings.Join(names, ", "))})
				continue
			}
			q.Set(k, b.Options[k])
		}
		p.buckets[key] = q
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
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

// bucketKey checks a bucket's location (scheme://bucket, no path)
// and returns its key and the option names its scheme accepts.
func bucketKey(loc string) (string, []string, error) {
	l, err := location.Parse(loc)
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

// LocationError is a catalog location the policy refuses. Its message is
// the same whether or not anything exists there.
type LocationError struct {
	Location string // as the catalog gave it, query dropped
	Reason   string
}

// Is reports a location outside the allow-list as
// register.ErrOutsideAllowed.
func (e *LocationError) Is(target error) bool {
	return target == register.ErrOutsideAllowed && e.Reason == reasonOutside
}

// reasonOutside is the reason of a location outside the allow-list.
const reasonOutside = "outside storage.allowed_locations"

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
func (p *StoragePolicy) Resolve(raw string) (location.Location, string, error) {
	if p == nil || p.allowed == nil {
		p = defaultPolicy
	}
	l, err := location.Parse(raw)
	if err != nil {
		return location.Location{}, "", &LocationError{Location: printable(raw), Reason: err.Error()}
	}
	if !p.allows(l) {
		return location.Location{}, "", &LocationError{Location: l.String(), Reason: reasonOutside}
	}
	if l.Scheme == "file" {
		u := url.URL{Scheme: l.Scheme, Path: l.Path}
		resolved, err := filepath.EvalSymlinks(filepath.FromSlash(l.Path))
		if err == nil {
			rl := location.Location{Scheme: "file", Path: filepath.ToSlash(resolved)}
			if !p.allows(rl) {
				return location.Location{}, "", &LocationError{Location: l.String(), Reason: "a symlink leads outside storage.allowed_locations"}
			}
			u.Path = rl.Path
		}
		return l, reuseIfSame(raw, u.String()), nil
	}
	return l, reuseIfSame(raw, p.openURL(l)), nil
}

// openURL is the URL a checked location is opened at: driver options from
// storage.buckets, abfss as azblob with its account. It checks nothing.
func (p *StoragePolicy) openURL(l location.Location) string {
	if p == nil || p.allowed == nil {
		p = defaultPolicy
	}
	u := url.URL{Scheme: l.Scheme, Host: l.Bucket, Path: l.Path}
	switch l.Scheme {
	case "file":
		u.Host = ""
		return u.String()
	case "abfss":
		container, host, _ := strings.Cut(l.Bucket, "@")
		account, _, _ := strings.Cut(host, ".")
		q := url.Values{"storage_account": {account}}
		for k, v := range p.buckets[l.Scheme+"://"+l.Bucket] {
			q[k] = v
		}
		u = url.URL{Scheme: "azblob", Host: container, Path: l.Path, RawQuery: q.Encode()}
		return u.String()
	}
	u.RawQuery = p.buckets[l.Scheme+"://"+l.Bucket].Encode()
	return u.String()
}

// reuseIfSame returns raw when s spells the same: the URL a table is opened at
// is kept for as long as the table is, and mostly it is the catalog's
// location itself, which the table's state keeps anyway.
func reuseIfSame(raw, s string) string {
	if s == raw {
		return raw
	}
	return s
}

func (p *StoragePolicy) allows(l location.Location) bool {
	for _, lp := range p.allowed {
		if lp.Match(l) {
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
