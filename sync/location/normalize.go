package location

import (
	"strings"
	"unicode"
)

// Normalize spells a table location the way the server stores it:
// trailing slashes stripped, repeated slashes after the scheme collapsed,
// and local paths ("/data/t", "file:/data/t", "file:///data/t") as file:///….
func Normalize(loc string) string {
	n := normalizeLocation(loc)
	// Whitespace before a trailing slash ("s3://b/k /") ends up last once
	// the slash is dropped; normalise again so the result is a fixed point.
	if t := strings.TrimRightFunc(n, unicode.IsSpace); t != n {
		return Normalize(t)
	}
	return n
}

func normalizeLocation(loc string) string {
	loc = strings.TrimSpace(loc)
	scheme, rest, ok := strings.Cut(loc, ":")
	if !ok || !isScheme(scheme) || len(scheme) < 2 {
		scheme, rest = "file", loc // plain path (or Windows drive letter)
	}
	scheme = strings.ToLower(scheme)
	if scheme == "file" {
		if r, ok := strings.CutPrefix(rest, "//localhost/"); ok {
			rest = r // file://localhost/p is file:///p
		}
		rest = "/" + strings.TrimLeft(rest, "/")
		rest = collapseSlashes(rest)
		rest = strings.TrimRight(rest, "/")
		if rest == "" {
			rest = "/"
		}
		return "file://" + rest
	}
	rest = strings.TrimPrefix(rest, "//")
	host, p, _ := strings.Cut(rest, "/")
	p = strings.TrimRight(collapseSlashes("/"+p), "/")
	if host == "" && p == "" {
		return scheme + ":" // names nothing; "s3://" would end in a slash
	}
	return scheme + "://" + host + p
}

// isScheme reports whether s is a URL scheme (RFC 3986: an ASCII letter,
// then letters, digits, "+", "-" or "."). Anything else before a colon is
// part of a path; lower-casing a non-ASCII "scheme" could also shorten it
// ("İ" becomes "i"), so that the result would no longer be its own
// normal form.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func collapseSlashes(s string) string {
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	return s
}
