package sync

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Mode says what deltasync may do about a table's drift.
type Mode string

const (
	// ModeSync pushes the log's metadata to EXTERNAL tables.
	ModeSync Mode = "sync"
	// ModeWarn only flags drift; it never writes.
	ModeWarn Mode = "warn"
)

// ParseMode checks a mode name; the empty string means ModeSync.
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case "", ModeSync:
		return ModeSync, nil
	case ModeWarn:
		return ModeWarn, nil
	}
	return "", fmt.Errorf("mode %q: want sync or warn", s)
}

// Rule selects tables by name and gives them a mode. Patterns are
// dot-separated globs, one part per name level with path.Match semantics:
// "main.sales.*", "*.*.orders_?". A pattern with fewer than three parts
// matches the trailing parts of the name ("tmp_*" is any table named tmp_*,
// "*.tmp_*" the same in any schema), the missing leading parts being "*".
// An include pattern starting with "!" is an exclude.
type Rule struct {
	Include []string
	Exclude []string
	Mode    Mode
	// OnDestructive says what a sync does with the selected tables'
	// destructive changes ("": OnDestructiveSync).
	OnDestructive OnDestructive
}

// pattern is a compiled three-part glob, lower-cased.
type pattern [3]string

func compilePattern(s string) (pattern, error) {
	var p pattern
	raw := strings.TrimSpace(s)
	if raw == "" {
		return p, fmt.Errorf("pattern %q: empty", s)
	}
	parts := strings.Split(strings.ToLower(raw), ".")
	if len(parts) > 3 {
		return p, fmt.Errorf("pattern %q: more than three dotted parts (want catalog.schema.table)", s)
	}
	for i := range p {
		p[i] = "*"
	}
	off := 3 - len(parts)
	for i, part := range parts {
		if part == "" {
			return p, fmt.Errorf("pattern %q: empty part %d", s, i+1)
		}
		if _, err := path.Match(part, ""); err != nil {
			return p, fmt.Errorf("pattern %q: part %q: %w", s, part, err)
		}
		p[off+i] = part
	}
	return p, nil
}

func (p pattern) match(name [3]string) bool {
	for i := range p {
		if ok, _ := path.Match(p[i], strings.ToLower(name[i])); !ok {
			return false
		}
	}
	return true
}

// literal reports whether every part is free of glob metacharacters.
func literalPart(s string) bool { return !strings.ContainsAny(s, `*?[\`) }

func (p pattern) literal() bool {
	return literalPart(p[0]) && literalPart(p[1]) && literalPart(p[2])
}

type compiledRule struct {
	include []pattern
	exclude []pattern
	mode    Mode
	onDestr OnDestructive
}

// Selector decides which tables a cycle covers and in which mode. Rules are
// tried in order; the first rule that includes the table and does not
// exclude it decides its mode.
type Selector struct {
	rules []compiledRule
}

// RuleError is a problem with one of the rules given to NewSelector: Rule
// is its index, Field the Rule field at fault ("Include", "Exclude"; ""
// for the rule as a whole, such as its Mode). The caller, which knows
// where the rules came from, names them (cmd: the config's tables[i].include).
type RuleError struct {
	Rule  int
	Field string
	Err   error
}

func (e *RuleError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("rule %d: %v", e.Rule, e.Err)
	}
	return fmt.Sprintf("rule %d %s: %v", e.Rule, e.Field, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// NewSelector compiles rules, reporting every bad pattern at once as
// *RuleError values joined (errors.Join).
func NewSelector(rules []Rule) (*Selector, error) {
	var errs []error
	s := &Selector{}
	for i, r := range rules {
		cr := compiledRule{mode: r.Mode}
		if cr.mode == "" {
			cr.mode = ModeSync
		}
		if _, err := ParseMode(string(cr.mode)); err != nil {
			errs = append(errs, &RuleError{Rule: i, Err: err})
		}
		od, err := ParseOnDestructive(string(r.OnDestructive))
		if err != nil {
			errs = append(errs, &RuleError{Rule: i, Err: err})
		}
		cr.onDestr = od
		for _, inc := range r.Include {
			neg := strings.HasPrefix(strings.TrimSpace(inc), "!")
			p, err := compilePattern(strings.TrimPrefix(strings.TrimSpace(inc), "!"))
			if err != nil {
				errs = append(errs, &RuleError{Rule: i, Field: "Include", Err: err})
				continue
			}
			if neg {
				cr.exclude = append(cr.exclude, p)
			} else {
				cr.include = append(cr.include, p)
			}
		}
		for _, exc := range r.Exclude {
			p, err := compilePattern(strings.TrimPrefix(strings.TrimSpace(exc), "!"))
			if err != nil {
				errs = append(errs, &RuleError{Rule: i, Field: "Exclude", Err: err})
				continue
			}
			cr.exclude = append(cr.exclude, p)
		}
		if len(cr.include) == 0 && len(r.Include) > 0 && len(errs) == 0 {
			errs = append(errs, &RuleError{Rule: i, Err: errors.New("only negated patterns; add an include")})
		}
		s.rules = append(s.rules, cr)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// OnDestructive is what the rule that selects the table says of its
// destructive changes; OnDestructiveSync for a table no rule selects.
func (s *Selector) OnDestructive(catalogName, schema, table string) OnDestructive {
	name := [3]string{catalogName, schema, table}
	for _, r := range s.rules {
		if anyMatch(r.include, name) && !anyMatch(r.exclude, name) {
			return r.onDestr
		}
	}
	return OnDestructiveSync
}

// Match reports whether the table is selected, and its mode.
func (s *Selector) Match(catalogName, schema, table string) (Mode, bool) {
	name := [3]string{catalogName, schema, table}
	for _, r := range s.rules {
		if !anyMatch(r.include, name) || anyMatch(r.exclude, name) {
			continue
		}
		return r.mode, true
	}
	return "", false
}

func anyMatch(ps []pattern, name [3]string) bool {
	for _, p := range ps {
		if p.match(name) {
			return true
		}
	}
	return false
}

// Catalogs returns the catalogs that include patterns name literally, or
// all=true when some pattern needs every catalog listed.
func (s *Selector) Catalogs() (names []string, all bool) {
	seen := map[string]bool{}
	for _, r := range s.rules {
		for _, p := range r.include {
			if !literalPart(p[0]) {
				return nil, true
			}
			if !seen[p[0]] {
				seen[p[0]] = true
				names = append(names, p[0])
			}
		}
	}
	sort.Strings(names)
	return names, false
}

// MayMatchSchema reports whether some include pattern could select a table
// in this schema, so listing can skip schemas that cannot match.
func (s *Selector) MayMatchSchema(catalogName, schema string) bool {
	for _, r := range s.rules {
		for _, p := range r.include {
			c, _ := path.Match(p[0], strings.ToLower(catalogName))
			sc, _ := path.Match(p[1], strings.ToLower(schema))
			if c && sc {
				return true
			}
		}
	}
	return false
}

// Explicit returns the fully literal include patterns ("main.sales.orders"):
// tables the configuration names one by one. They are reconciled even when
// a listing does not show them, so a missing table is reported, not ignored.
func (s *Selector) Explicit() [][3]string {
	var out [][3]string
	seen := map[[3]string]bool{}
	for _, r := range s.rules {
		for _, p := range r.include {
			if p.literal() && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
