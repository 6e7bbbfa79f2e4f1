// Package redact hides what may be secret in a URL before it is printed.
// There are two rules, by what the URL is, and every package uses one of
// these two:
//
//   - Location, for a table's storage location: the path names the table
//     and is kept; query (SAS tokens, driver options), user info and
//     fragment are dropped.
//   - Endpoint, for a service URL from the configuration (catalog,
//     heartbeat, Pushgateway, OAuth token URL, event subscriptions): the
//     path is hidden too, since heartbeat services put their secret in
//     it; user info and every query value are replaced by REDACTED.
package redact

import (
	"net/url"
	"strings"
)

// Location returns a storage location safe to print: without query, user
// info and fragment; the path is kept. A plain path is returned as is.
func Location(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexByte(raw, '?'); i >= 0 {
			return raw[:i]
		}
		return raw
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}

// Endpoint returns a configured service URL safe to print: user info,
// path (except the Unity Catalog API suffix) and every query value
// replaced by REDACTED, keys kept. An unparseable URL is [REDACTED].
func Endpoint(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "[REDACTED]"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	redactPath(u)
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q.Set(k, "REDACTED")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactPath hides a URL's path, which heartbeat services use for their
// secret; the catalog API suffix is kept, since it says nothing secret.
func redactPath(u *url.URL) {
	const api = "/api/2.1/unity-catalog"
	p := strings.TrimRight(u.Path, "/")
	keep := ""
	if strings.HasSuffix(p, api) {
		p, keep = strings.TrimSuffix(p, api), api
	}
	if p != "" {
		keep = "/REDACTED" + keep
	}
	u.Path, u.RawPath = keep, ""
}
