package sync

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/deltasync/deltasync/sync/plan"
)

// The Markdown report (plan -o markdown) is a pull request comment: a
// summary line and what the exit code means; destructive changes first,
// each marked; held tables; the other changes per table; flagged, refused
// and failed tables with their reasons; the tables in sync folded. Long
// plans are folded and the whole is capped below GitHub's comment limit.
const (
	// MarkdownLimit caps a Markdown report, in bytes: below GitHub's
	// 65,536-character limit on a comment, with room for what a CI job
	// adds around it (a marker, a header, a link to the run).
	MarkdownLimit = 60000
	// mdFoldRows is how many non-destructive change rows of one table
	// are shown before the rest are folded; destructive rows never are.
	mdFoldRows = 10
	// mdFoldTables is how many tables of a section are shown before the
	// rest are folded.
	mdFoldTables = 20
	// mdMaxCell caps one value (a column's JSON, a property value, a
	// reason) in a cell; the saved plan and -o json hold it whole.
	mdMaxCell = 400
	// mdReserve is the room kept for closing folds and the line saying
	// what was cut.
	mdReserve = 600
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a pull
// request comment, at most MarkdownLimit bytes.
func (r *Report) WriteMarkdown(w io.Writer) error {
	return r.writeMarkdown(w, MarkdownLimit)
}

func (r *Report) writeMarkdown(w io.Writer, limit int) error {
	m := &mdWriter{limit: limit}
	m.put(r.markdownHeader())
	var destructive, held, changed, flaggedRes, failedRes, registered, inSync []Result
	for _, res := range r.Results {
		switch {
		case res.Held != "":
			held = append(held, res)
		case res.WouldUpdate || res.Outcome == OutcomeSynced && res.Plan != nil:
			if res.Plan != nil && len(res.Plan.Destructive()) > 0 {
				destructive = append(destructive, res)
			} else {
				changed = append(changed, res)
			}
		case res.Registration != nil || res.Outcome == OutcomeOrphaned || res.Outcome == OutcomeAlreadyRegistered:
			registered = append(registered, res)
		case res.Outcome == OutcomeFlagged:
			flaggedRes = append(flaggedRes, res)
		case res.Outcome == OutcomeFailed:
			failedRes = append(failedRes, res)
		case res.Outcome == OutcomeUnchanged:
			inSync = append(inSync, res)
		default: // synced without a plan left to show
			changed = append(changed, res)
		}
	}
	verb := "would send"
	if !r.DryRun {
		verb = "sent"
	}
	m.section("⚠️ Destructive changes", destructive, func(res Result) { m.changeTable(res, verb, false) },
		"A destructive change (a column dropped or renamed, a type changed other than a widening, partitioning changed, a property removed, ...) can lose what a governed catalog keeps on the field: its tags and masks.")
	m.section("⏸️ Held by on_destructive: hold", held, func(res Result) { m.changeTable(res, "held, not sent", false) },
		"Nothing of a held update is sent by a sync: applying a reviewed saved plan (`deltasync apply`) sends it whole.")
	m.section("Changes", changed, func(res Result) { m.changeTable(res, verb, false) })
	m.section("Registrations", registered, m.registration)
	m.section("🚩 Flagged and refused", flaggedRes, func(res Result) { m.changeTable(res, "", true) })
	m.section("❌ Failed", failedRes, func(res Result) { m.changeTable(res, "", true) })
	m.inSync(inSync)
	m.notes(r)
	return m.finish(w)
}

// markdownHeader is the summary line, as a heading, and what the exit
// code of the command that wrote the report means.
func (r *Report) markdownHeader() string {
	c := r.Counts()
	held, destructive := 0, 0
	for _, res := range r.Results {
		switch {
		case res.Held != "":
			held++
		case (res.WouldUpdate || res.Outcome == OutcomeSynced) && res.Plan != nil && len(res.Plan.Destructive()) > 0:
			destructive++
		}
	}
	title, change := "deltasync plan", fmt.Sprintf("%d to change", c.WouldUpdate)
	if !r.DryRun {
		title, change = "deltasync", fmt.Sprintf("%d synced", c.Synced)
	}
	parts := []string{fmt.Sprintf("%s (%d destructive)", change, destructive), fmt.Sprintf("%d held", held)}
	flagged := fmt.Sprintf("%d flagged", c.Flagged-held)
	if c.Refused > 0 {
		flagged += fmt.Sprintf(" (%d refused)", c.Refused)
	}
	parts = append(parts, flagged, fmt.Sprintf("%d failed", c.Failed), fmt.Sprintf("%d in sync", c.Unchanged))
	for _, n := range []struct {
		n    int
		what string
	}{{c.WouldRegister, "to register"}, {c.Registered, "registered"}, {c.AlreadyRegistered, "already registered elsewhere"},
		{c.Orphaned, "orphaned"}, {c.Skipped, "skipped"}, {c.BackingOff, "backing off"}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s\n\n", title, strings.Join(parts, ", "))
	code, meaning := 0, "in sync"
	switch {
	case r.Failed():
		code, meaning = 1, "a table failed or the catalog could not be listed"
	case r.Drift() && r.DryRun:
		code, meaning = 2, "drift found"
	case r.Drift():
		code, meaning = 2, "drift remains (flagged, held or watch-only tables)"
	}
	legend := "`deltasync plan` exits 0 in sync, 2 drift found, 1 error"
	if !r.DryRun {
		legend = "`deltasync once` exits 0 all good, 2 drift remains, 1 a table failed"
	}
	fmt.Fprintf(&b, "**Exit %d**: %s (%s). %s in %s.\n", code, meaning, legend,
		plural(c.Tables, "table"), r.Duration.Round(100*time.Millisecond))
	return b.String()
}

// mdWriter builds the report piece by piece, each piece whole or not at
// all: once a piece would not fit under limit, nothing more is written,
// the open folds are closed and a line says how much was cut.
type mdWriter struct {
	b     strings.Builder
	limit int
	open  int // <details> opened and not yet closed
	cut   bool
	// tables is how many tables were to be shown, done how many were
	// shown whole.
	tables, done int
}

// put writes s if it fits (leaving room to close the folds and say what
// was cut) and reports whether it did.
func (m *mdWriter) put(s string) bool {
	if m.cut {
		return false
	}
	if m.b.Len()+len(s)+m.open*len("</details>\n\n")+mdReserve > m.limit {
		m.cut = true
		return false
	}
	m.b.WriteString(s)
	return true
}

// fold opens a <details> block whose summary is summary (plain text).
func (m *mdWriter) fold(summary string) {
	if m.put("<details><summary>" + htmlText(summary) + "</summary>\n\n") {
		m.open++
	}
}

// unfold closes the innermost open <details>.
func (m *mdWriter) unfold() {
	if m.open > 0 && !m.cut {
		m.b.WriteString("</details>\n\n")
		m.open--
	}
}

// finish closes what is open, says what was cut, and writes the report.
func (m *mdWriter) finish(w io.Writer) error {
	if m.cut {
		for ; m.open > 0; m.open-- {
			m.b.WriteString("</details>\n\n")
		}
		fmt.Fprintf(&m.b, "\n---\n✂️ **Cut**: %d of %d tables are not shown here (in whole or in part) to keep this under GitHub's comment size limit (%d bytes). "+
			"The whole plan: `deltasync plan` (text) or `deltasync plan -o json`, or the saved plan (`--out`).\n",
			m.tables-m.done, m.tables, m.limit)
	}
	_, err := io.WriteString(w, m.b.String())
	return err
}

// section writes a heading and each result with show, the tables past
// mdFoldTables folded.
func (m *mdWriter) section(title string, results []Result, show func(Result), intro ...string) {
	if len(results) == 0 {
		return
	}
	m.tables += len(results)
	m.put(fmt.Sprintf("\n#### %s (%d)\n\n", title, len(results)))
	for _, s := range intro {
		m.put("_" + s + "_\n\n")
	}
	for i, res := range results {
		if i == mdFoldTables {
			m.fold(plural(len(results)-mdFoldTables, "more table"))
		}
		before := m.cut
		show(res)
		if !before && !m.cut {
			m.done++
		}
	}
	if len(results) > mdFoldTables {
		m.unfold()
	}
}

// tableLine is a table's first line: its name, type and mode, and what
// was (or would be) sent.
func tableLine(res Result, verb string) string {
	s := fmt.Sprintf("**%s** (%s, %s)", code(res.Table), mdText(orNone(res.Type)), mdText(string(res.Mode)))
	if verb != "" && len(res.Actions) > 0 {
		acts := make([]string, len(res.Actions))
		for i, a := range res.Actions {
			acts[i] = code(a)
		}
		s += fmt.Sprintf(" — %s: %s", verb, strings.Join(acts, ", "))
	}
	return s + "\n\n"
}

// changeTable writes one table: its line, its reason when withReason,
// then its changes, destructive ones first and marked. Non-destructive
// rows past mdFoldRows are folded; a flagged or failed table's changes
// (withReason) are folded whole, since nothing of them is sent.
func (m *mdWriter) changeTable(res Result, verb string, withReason bool) {
	if !m.put(tableLine(res, verb)) {
		return
	}
	if withReason && res.Reason != "" {
		label := "Reason"
		if res.ErrorReason == ReasonRefused {
			label = "Refused by the catalog"
		}
		if !m.put(fmt.Sprintf("%s: %s\n\n", label, code(res.Reason))) {
			return
		}
	}
	if res.Plan == nil {
		return
	}
	var destructive, other []plan.Change
	for _, c := range res.Plan.Changes() {
		if c.Class == plan.ClassDestructive {
			destructive = append(destructive, c)
		} else {
			other = append(other, c)
		}
	}
	shown := other
	if withReason {
		m.fold(fmt.Sprintf("%s, not sent (%d destructive)", plural(len(destructive)+len(other), "change"), len(destructive)))
		defer m.unfold()
	} else if len(other) > mdFoldRows {
		shown = other[:mdFoldRows]
	}
	m.rows(append(destructive, shown...))
	if rest := other[len(shown):]; len(rest) > 0 {
		m.fold(fmt.Sprintf("%d more non-destructive changes of %s", len(rest), res.Table))
		m.rows(rest)
		m.unfold()
	}
	for _, u := range res.Plan.Unsupported {
		m.put("- unsupported type: " + code(u) + "\n")
	}
	for _, p := range res.Plan.Problems {
		m.put("- problem: " + code(p) + "\n")
	}
	if len(res.Plan.Unsupported)+len(res.Plan.Problems) > 0 {
		m.put("\n")
	}
}

// rows writes changes as a Markdown table: the field and what is done to
// it (destructive ones marked), the catalog's value before and the log's
// after; a removal shows the removed value.
func (m *mdWriter) rows(cs []plan.Change) {
	if len(cs) == 0 || !m.put("| | Change | Catalog (before) | Log (after) |\n|---|---|---|---|\n") {
		return
	}
	for _, c := range cs {
		mark := ""
		if c.Class == plan.ClassDestructive {
			mark = "⚠️ **destructive**"
		}
		what := code(c.Field) + ": " + mdText(string(c.Op))
		for _, d := range c.Details {
			what += "<br>" + code(d)
		}
		before, after := changeValue(c, c.Catalog), changeValue(c, c.Log)
		switch c.Op {
		case plan.OpAdd:
			before = "*(none)*"
		case plan.OpRemove:
			after = "*(removed)*"
		}
		if !m.put(fmt.Sprintf("| %s | %s | %s | %s |\n", mark, what, before, after)) {
			return
		}
	}
	m.put("\n")
}

// changeValue is one side of a change in a cell: a property's or the
// comment's value quoted (as the text plan shows it), anything else as
// the plan has it (a column's JSON, a position, a version).
func changeValue(c plan.Change, v string) string {
	if c.Kind == plan.KindProperties || c.Kind == plan.KindComment {
		v = strconv.Quote(v)
	} else if v == "" {
		return "*(none)*"
	}
	return code(v)
}

// registration writes what a register rule creates (or found).
func (m *mdWriter) registration(res Result) {
	line := tableLine(res, "")
	line = strings.TrimSuffix(line, "\n\n") + ": " + mdText(strings.ReplaceAll(string(res.Outcome), "_", " "))
	if res.Registration != nil {
		line += " at " + code(res.Registration.Location)
	}
	if res.Reason != "" {
		line += " — " + code(res.Reason)
	}
	m.put(line + "\n\n")
}

// inSync lists the tables in sync, folded.
func (m *mdWriter) inSync(results []Result) {
	if len(results) == 0 {
		return
	}
	m.put(fmt.Sprintf("\n#### ✅ In sync (%d)\n\n", len(results)))
	m.fold(plural(len(results), "table") + " in sync")
	for _, res := range results {
		m.put("- " + code(res.Table) + "\n")
	}
	m.put("\n")
	m.unfold()
}

// notes writes the cycle's other facts: tables skipped or backing off,
// catalogs without the Delta API, listing errors, an interrupted cycle.
func (m *mdWriter) notes(r *Report) {
	var lines []string
	for _, c := range r.ReadOnly {
		lines = append(lines, code(readOnlyLine(c)))
	}
	for _, s := range r.Skipped {
		lines = append(lines, code(s.Table)+": skipped: "+code(s.Reason))
	}
	for _, d := range r.Deferred {
		lines = append(lines, code(d)+": backing off after failures")
	}
	if r.Err != nil {
		for _, e := range strings.Split(r.Err.Error(), "\n") {
			lines = append(lines, "listing error: "+code(e))
		}
	}
	if r.Interrupted {
		lines = append(lines, "the cycle was interrupted: tables not reached are not in this report")
	}
	if len(lines) == 0 {
		return
	}
	m.put("\n#### Notes\n\n")
	for _, l := range lines {
		m.put("- " + l + "\n")
	}
}

// plural is "1 table", "2 tables".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
