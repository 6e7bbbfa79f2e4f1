package main

import (
	"fmt"
	"strings"

	"github.com/deltasync/deltasync/sync"
)

// A table rule that selects nothing is almost always a typo ('main.s' for
// 'main.sales.*', a misspelt catalog); plan and once report it loudly and
// exit 1 unless --allow-empty says an empty selection is expected.

// unmatchedRules names each table rule under which the cycle saw no table
// at all (reconciled, skipped or backing off). Nothing is reported when the
// listing itself failed: that is already an error.
func unmatchedRules(cfg config, rep *sync.Report, viaFlag bool, file string) []string {
	if rep.Err != nil {
		return nil
	}
	var seen [][3]string
	add := func(full string) {
		parts := strings.SplitN(full, ".", 3)
		if len(parts) == 3 {
			seen = append(seen, [3]string{parts[0], parts[1], parts[2]})
		}
	}
	for _, r := range rep.Results {
		add(r.Table)
	}
	for _, s := range rep.Skipped {
		add(s.Table)
	}
	for _, d := range rep.Deferred {
		add(d)
	}
	var out []string
	for i, rule := range cfg.Tables {
		sel, err := sync.NewSelector([]sync.Rule{{Include: rule.Include, Exclude: rule.Exclude}})
		if err != nil {
			continue // reported by validate
		}
		matched := false
		for _, n := range seen {
			if _, ok := sel.Match(n[0], n[1], n[2]); ok {
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		quoted := make([]string, len(rule.Include))
		for j, p := range rule.Include {
			quoted[j] = "'" + p + "'"
		}
		switch {
		case viaFlag:
			out = append(out, "--include "+strings.Join(quoted, " --include "))
		case file != "":
			out = append(out, fmt.Sprintf("%s: tables[%d] (include %s)", file, i, strings.Join(quoted, ", ")))
		default:
			out = append(out, fmt.Sprintf("tables[%d] (include %s)", i, strings.Join(quoted, ", ")))
		}
	}
	return out
}

// reportUnmatched warns on stderr about each rule that selected nothing
// and says whether that fails the command.
func (c *cli) reportUnmatched(rules []string, allowEmpty bool) {
	for _, r := range rules {
		fmt.Fprintf(c.stderr, "deltasync: WARNING: %s selected no table: check the catalog, schema and table names%s\n", r, patternHint(r))
	}
	if len(rules) > 0 && !allowEmpty {
		fmt.Fprintln(c.stderr, "deltasync: exiting 1 because a table rule selected nothing; pass --allow-empty if that is expected")
	}
}

// patternHint explains how a pattern of fewer than three parts is read,
// the usual cause of an empty selection: 'main.s' is schema main, table s,
// in any catalog.
func patternHint(rule string) string {
	for _, field := range strings.Split(rule, "'") {
		if strings.ContainsAny(field, " ,:") || field == "" || strings.HasPrefix(field, "-") {
			continue
		}
		switch parts := strings.Split(field, "."); len(parts) {
		case 1:
			return fmt.Sprintf(" ('%s' is read as a table name in any catalog and schema; patterns are catalog.schema.table)", field)
		case 2:
			return fmt.Sprintf(" ('%s' is read as schema.table in any catalog; every table of catalog %s, schema %s is '%s.*')",
				field, parts[0], parts[1], field)
		}
	}
	return " (patterns are catalog.schema.table, each part a glob: 'main.sales.*')"
}
