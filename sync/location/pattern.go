package location

import (
	"fmt"
	"path"
	"strings"
)

// Pattern is one parsed allow-list entry (ParsePattern).
type Pattern struct {
	raw    string
	scheme string
	bucket string   // path.Match glob
	segs   []string // path.Match globs; "**" matches any number of segments
}

// String is the entry as written.
func (lp Pattern) String() string { return lp.raw }

// ParsePattern parses an allow-list entry: scheme://bucket-glob/segment-globs,
// "**" standing for any number of segments. Hadoop aliases (s3a, abfs)
// and the file:/ forms are accepted as for locations.
func ParsePattern(raw string) (Pattern, error) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, "/") {
		s = "file://" + s
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Pattern{}, fmt.Errorf("want scheme://bucket/prefix/** or file:///dir/**")
	}
	canon, ok := canonicalScheme(scheme)
	if !ok {
		return Pattern{}, fmt.Errorf("scheme %q is not supported", strings.ToLower(scheme))
	}
	scheme = canon
	if strings.ContainsAny(rest, "?#\\") {
		return Pattern{}, fmt.Errorf("no query, fragment or backslash")
	}
	lp := Pattern{raw: raw, scheme: scheme}
	var p string
	if scheme == "file" {
		p = rest
	} else {
		if !strings.HasPrefix(rest, "//") {
			return Pattern{}, fmt.Errorf("want %s://bucket/<path>", scheme)
		}
		lp.bucket, p, _ = strings.Cut(rest[2:], "/")
		lp.bucket = strings.ToLower(lp.bucket)
		if lp.bucket == "" {
			return Pattern{}, fmt.Errorf("no bucket (use * for any)")
		}
		if _, err := path.Match(lp.bucket, ""); err != nil {
			return Pattern{}, err
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			continue
		case ".", "..":
			return Pattern{}, fmt.Errorf("%q segments are not accepted", seg)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return Pattern{}, err
		}
		lp.segs = append(lp.segs, seg)
	}
	return lp, nil
}

// Match reports whether l lies under the pattern.
func (lp Pattern) Match(l Location) bool {
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
