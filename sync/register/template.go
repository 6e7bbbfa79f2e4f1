package register

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/location"
)

// This file holds the templates of register rules: a location template
// whose path segments may be named variables ("s3://lake/wh/{schema}/{table}")
// and a name template ("main.{schema}.{table}") built from them, and the
// normalisation that turns a directory name into a name the catalog accepts.

// Rule maps the Delta tables found under a location template to
// catalog names. Location's path segments are literal or "{var}" (a whole
// segment); Name is catalog.schema.table, each part literal text mixed with
// "{var}" of the location. A Location without variables names one table.
type Rule struct {
	Location string
	Name     string
}

// maxNameLength is the longest name Unity Catalog accepts
// (ValidationUtils.MAX_NAME_LENGTH in the OSS server).
const maxNameLength = 255

// NormalizeName turns a directory name into a table, schema or catalog name
// the catalog accepts and stores as written: lower-cased, and every
// character outside [a-z0-9_] (the OSS server accepts [a-zA-Z0-9_@-],
// engines quote '-' and '@', Databricks lower-cases) replaced with '_', so
// "Sales-EU" and "sales_eu" are the same name (reported as a collision if
// both exist). It returns an error for an empty or over-long result.
func NormalizeName(s string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	switch {
	case out == "":
		return "", fmt.Errorf("empty name")
	case len(out) > maxNameLength:
		return "", fmt.Errorf("name %q is longer than %d characters", out[:32]+"…", maxNameLength)
	}
	return out, nil
}

var templateVar = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// template is one compiled register rule.
type template struct {
	index int
	rule  Rule
	// root is the location with the path cut before the first variable
	// segment; segs are the path segments after it, literal or variables.
	root location.Location
	segs []tmplSeg
	// name holds the three name parts, each a list of literal and variable
	// pieces.
	name [3][]tmplSeg
}

type tmplSeg struct {
	lit string
	v   string // variable name; lit is empty
}

// TemplateError is a problem with one register rule: Rule is its index,
// Field "Location" or "Name".
type TemplateError struct {
	Rule  int
	Field string
	Err   error
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("register rule %d %s: %v", e.Rule, e.Field, e.Err)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// compile parses rule i and checks its location lies inside the
// storage policy's allow-list (Host.Resolve).
func compile(i int, rule Rule, host Host) (*template, error) {
	terr := func(field, format string, args ...any) error {
		return &TemplateError{Rule: i, Field: field, Err: fmt.Errorf(format, args...)}
	}
	t := &template{index: i, rule: rule}
	raw := strings.TrimSpace(rule.Location)
	if raw == "" {
		return nil, terr("Location", "empty")
	}
	// Variables must be whole path segments: replace each with a
	// placeholder that survives parsing, then find them again.
	vars := map[string]bool{}
	var order []string
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok && strings.HasPrefix(raw, "/") {
		scheme, rest = "file", raw
	}
	if strings.Contains(scheme, "{") {
		return nil, terr("Location", "%q: a variable in the scheme", raw)
	}
	parts := strings.Split(rest, "/")
	for k, p := range parts {
		m := templateVar.FindAllStringSubmatchIndex(p, -1)
		if len(m) == 0 {
			if strings.ContainsAny(p, "{}") {
				return nil, terr("Location", "%q: segment %q: want {name} with a name of letters, digits and _", raw, p)
			}
			continue
		}
		if len(m) > 1 || m[0][0] != 0 || m[0][1] != len(p) {
			return nil, terr("Location", "%q: segment %q: a variable must be a whole path segment", raw, p)
		}
		if k == 0 && scheme != "file" {
			return nil, terr("Location", "%q: a variable in the bucket", raw)
		}
		v := p[m[0][2]:m[0][3]]
		if vars[v] {
			return nil, terr("Location", "%q: variable {%s} used twice", raw, v)
		}
		vars[v] = true
		order = append(order, v)
		parts[k] = placeholder(len(order) - 1)
	}
	filled := scheme + "://" + strings.Join(parts, "/")
	if scheme == "file" && !ok {
		filled = strings.Join(parts, "/")
	}
	l, err := location.Parse(filled)
	if err != nil {
		return nil, terr("Location", "%q: %v", raw, err)
	}
	if _, _, err := host.Resolve(l.String()); err != nil {
		if errors.Is(err, ErrOutsideAllowed) {
			return nil, terr("Location", "%q lies outside storage.allowed_locations", raw)
		}
		return nil, terr("Location", "%q: %v", raw, err)
	}
	segs := strings.Split(strings.TrimPrefix(l.Path, "/"), "/")
	first := -1
	for k, s := range segs {
		if idx, ok := placeholderIndex(s); ok {
			if first < 0 {
				first = k
			}
			t.segs = append(t.segs, tmplSeg{v: order[idx]})
		} else if first >= 0 {
			t.segs = append(t.segs, tmplSeg{lit: s})
		}
	}
	if first < 0 {
		t.root = l
	} else {
		t.root = location.Location{Scheme: l.Scheme, Bucket: l.Bucket, Path: strings.TrimSuffix("/"+strings.Join(segs[:first], "/"), "/")}
	}

	nameParts := strings.Split(strings.TrimSpace(rule.Name), ".")
	if len(nameParts) != 3 {
		return nil, terr("Name", "%q: want catalog.schema.table", rule.Name)
	}
	used := map[string]bool{}
	for k, p := range nameParts {
		if p == "" {
			return nil, terr("Name", "%q: empty part %d", rule.Name, k+1)
		}
		last := 0
		for _, m := range templateVar.FindAllStringSubmatchIndex(p, -1) {
			if lit := p[last:m[0]]; lit != "" {
				t.name[k] = append(t.name[k], tmplSeg{lit: lit})
			}
			v := p[m[2]:m[3]]
			if !vars[v] {
				return nil, terr("Name", "%q: {%s} is not a variable of the location %q", rule.Name, v, raw)
			}
			used[v] = true
			t.name[k] = append(t.name[k], tmplSeg{v: v})
			last = m[1]
		}
		if lit := p[last:]; lit != "" {
			if strings.ContainsAny(lit, "{}") {
				return nil, terr("Name", "%q: part %q: want {name} with a name of letters, digits and _", rule.Name, p)
			}
			t.name[k] = append(t.name[k], tmplSeg{lit: lit})
		}
		for _, s := range t.name[k] {
			if s.v == "" {
				if n, err := NormalizeName(s.lit); err != nil || n != s.lit {
					return nil, terr("Name", "%q: %q is not a name the catalog stores as written (lower-case letters, digits and _)", rule.Name, s.lit)
				}
			}
		}
	}
	for _, v := range order {
		if !used[v] {
			// Two directories differing only there would get one name.
			return nil, terr("Name", "%q does not use {%s} of the location %q", rule.Name, v, raw)
		}
	}
	return t, nil
}

func placeholder(i int) string { return fmt.Sprintf("deltasync-var-%d-x", i) }

func placeholderIndex(s string) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(s, "deltasync-var-%d-x", &i); err != nil || placeholder(i) != s {
		return 0, false
	}
	return i, true
}

// nameFor builds the normalised table name from the variables' values.
func (t *template) nameFor(vals map[string]string) (catalog.TableName, error) {
	var out [3]string
	for k, pieces := range t.name {
		var b strings.Builder
		for _, p := range pieces {
			if p.v == "" {
				b.WriteString(p.lit)
				continue
			}
			n, err := NormalizeName(vals[p.v])
			if err != nil {
				return catalog.TableName{}, fmt.Errorf("{%s} = %q: %w", p.v, vals[p.v], err)
			}
			b.WriteString(n)
		}
		if b.Len() > maxNameLength {
			return catalog.TableName{}, fmt.Errorf("name part %q is longer than %d characters", b.String()[:32]+"…", maxNameLength)
		}
		out[k] = b.String()
	}
	return catalog.TableName{Catalog: out[0], Schema: out[1], Table: out[2]}, nil
}

// match reports the variables' values when l (normalised) lies exactly at
// a location the template describes.
func (t *template) match(l location.Location) (map[string]string, bool) {
	if l.Scheme != t.root.Scheme || l.Bucket != t.root.Bucket {
		return nil, false
	}
	rest, ok := strings.CutPrefix(l.Path, t.root.Path)
	if !ok {
		return nil, false
	}
	if len(t.segs) == 0 {
		return nil, rest == ""
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok {
		return nil, false
	}
	segs := strings.Split(rest, "/")
	if len(segs) != len(t.segs) {
		return nil, false
	}
	vals := map[string]string{}
	for k, s := range t.segs {
		switch {
		case s.v != "":
			if segs[k] == "" {
				return nil, false
			}
			vals[s.v] = segs[k]
		case s.lit != segs[k]:
			return nil, false
		}
	}
	return vals, true
}

// literalPart is part k (0 catalog, 1 schema, 2 table) of the name
// template when it is literal text ("" when it holds a variable).
func (t *template) literalPart(k int) string {
	if len(t.name[k]) == 1 && t.name[k][0].v == "" {
		return t.name[k][0].lit
	}
	return ""
}
