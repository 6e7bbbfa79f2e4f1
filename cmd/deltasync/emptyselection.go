package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deltasync/deltasync/sync"
)

// A table rule that selects nothing is almost always a typo ('main.s' for
// 'main.sales.*', a misspelt catalog); plan and once report it loudly and
// exit 1 unless --allow-empty says an empty selection is expected.

// unmatchedRules names each table rule under which the cycle saw no table
// at all (reconciled, skipped or backing off). Nothing is reported when the
// listing itself failed: that is already an error.
func unmatchedRules(s settings, rep *sync.Report, viaFlag bool, file string) []string {
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
	for i, rule := range s.rules {
		if rule.sel == nil {
			continue // refused by settings
		}
		matched := false
		for _, n := range seen {
			if _, ok := rule.sel.Match(n[0], n[1], n[2]); ok {
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		out = append(out, ruleLabel(rule.tableRule, i, viaFlag, file))
	}
	return out
}

// ruleLabel names table rule i the way the user wrote it: the --include
// flags, or the config file's tables[i].
func ruleLabel(rule tableRule, i int, viaFlag bool, file string) string {
	quoted := make([]string, len(rule.Include))
	for j, p := range rule.Include {
		quoted[j] = "'" + p + "'"
	}
	switch {
	case viaFlag:
		return "--include " + strings.Join(quoted, " --include ")
	case file != "":
		return fmt.Sprintf("%s: tables[%d] (include %s)", file, i, strings.Join(quoted, ", "))
	default:
		return fmt.Sprintf("tables[%d] (include %s)", i, strings.Join(quoted, ", "))
	}
}

// refusedSelections says, one sentence each, what the storage allow-list
// refused whole: every table the cycle reconciled, or else every table of
// one rule, flagged because its location is outside
// storage.allowed_locations. After an upgrade that brought the allow-list
// this is how a deployment "runs" while reconciling nothing, and exit 2
// alone does not say why.
func refusedSelections(s settings, rep *sync.Report, viaFlag bool, file string) []string {
	if len(rep.Results) == 0 {
		return nil
	}
	isRefused := func(r sync.Result) bool { return r.ErrorReason == sync.ReasonLocation }
	allowed := s.allowedLocations
	advice := fmt.Sprintf("outside storage.allowed_locations (allowed now: %s): add the tables' locations there or with --allow-location",
		strings.Join(allowed, ", "))
	refused := 0
	for _, r := range rep.Results {
		if isRefused(r) {
			refused++
		}
	}
	if refused == len(rep.Results) {
		return []string{fmt.Sprintf("every selected table (%d, e.g. %s) was refused because its storage location is %s",
			refused, rep.Results[0].Table, advice)}
	}
	var out []string
	for i, rule := range s.rules {
		if rule.sel == nil {
			continue // refused by settings
		}
		var matched []sync.Result
		for _, r := range rep.Results {
			parts := strings.SplitN(r.Table, ".", 3)
			if len(parts) != 3 {
				continue
			}
			if _, ok := rule.sel.Match(parts[0], parts[1], parts[2]); ok {
				matched = append(matched, r)
			}
		}
		if len(matched) > 0 && !slices.ContainsFunc(matched, func(r sync.Result) bool { return !isRefused(r) }) {
			out = append(out, fmt.Sprintf("every table of %s (%d, e.g. %s) was refused because its storage location is %s",
				ruleLabel(rule.tableRule, i, viaFlag, file), len(matched), matched[0].Table, advice))
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

// reportRefused warns on stderr about each selection the allow-list
// refused whole (see refusedSelections).
func (c *cli) reportRefused(sentences []string) {
	for _, s := range sentences {
		fmt.Fprintf(c.stderr, "deltasync: WARNING: %s\n", s)
	}
}
