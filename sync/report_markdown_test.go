package sync

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/sync/plan"
)

// markdownFixture is reportFixture's cycle with the tables a pull request
// comment must tell apart: a destructive update (b), a non-destructive
// one (n), a held table (h), a refused one (r), a MANAGED table flagged
// (c), a failed one (d) and one in sync (a).
func markdownFixture(t *testing.T) *Report {
	t.Helper()
	rep := reportFixture(t)
	log := testLog()
	rec := faithful(t, log)
	rec.Comment = "old"
	commentOnly := plan.Diff(log, rec, plan.DiffOptions{})
	destructive := *rep.Results[1].Plan
	v := func(n int64) *int64 { return &n }
	rep.Results = append(rep.Results,
		Result{Table: "main.sales.n", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
			Reason: "dry run: would send set-table-comment", Plan: &commentOnly, Actions: commentOnly.Edit(log).Actions(),
			WouldUpdate: true, LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
		Result{Table: "main.sales.h", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
			Reason: whyHeld(destructive.Destructive()), Plan: &destructive, Actions: destructive.Edit(log).Actions(),
			Held: HeldDestructive, LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
		Result{Table: "main.sales.r", Type: "EXTERNAL", Mode: ModeSync, Outcome: OutcomeFlagged, Status: StatusOutOfSync,
			ErrorReason: ReasonRefused, Reason: "catalog refused the update: comment longer than 1024 characters",
			Plan: &commentOnly, LogVersion: v(7), CatalogVersion: v(7), Attempts: 1},
	)
	return rep
}

func TestReportMarkdownGolden(t *testing.T) {
	rep := markdownFixture(t)
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
	out := buf.String()
	head, _, _ := strings.Cut(out, "\n")
	if want := "### deltasync plan: 2 to change (1 destructive), 1 held, 2 flagged (1 refused), 1 failed, 1 in sync, 1 skipped, 1 backing off"; head != want {
		t.Errorf("summary line\n got %s\nwant %s", head, want)
	}
	// Destructive changes come first: before the held, the other changes
	// and the flagged tables.
	order := []string{"⚠️ Destructive changes", "<code>main.sales.b</code>", "Held", "<code>main.sales.h</code>",
		"#### Changes", "<code>main.sales.n</code>", "Flagged", "<code>main.sales.c</code>", "<code>main.sales.r</code>",
		"Failed", "<code>main.sales.d</code>", "In sync", "<code>main.sales.a</code>"}
	at := 0
	for _, s := range order {
		i := strings.Index(out[at:], s)
		if i < 0 {
			t.Fatalf("%q missing or out of order after byte %d:\n%s", s, at, out)
		}
		at += i + len(s)
	}
	// The removal shows the removed value, marked destructive.
	if !strings.Contains(out, "| ⚠️ **destructive** | <code>property stray</code>: remove | <code>&quot;x&quot;</code> | *(removed)* |") {
		t.Errorf("no marked removal with its removed value:\n%s", out)
	}
}

// TestMarkdownEscapesNamesAndValues: a value holding a pipe, HTML,
// backticks, a newline, an @mention, emphasis and math stays one literal
// cell of its row; a table name the same.
func TestMarkdownEscapesNamesAndValues(t *testing.T) {
	const hostile = "a|b <script>alert(1)</script> `x` ``y``\n@admin *bold* [l](http://e) $x$ \\| &amp; </details>"
	log := testLog()
	rec := faithful(t, log)
	rec.Properties["owner.team"] = hostile
	rec.Properties["evil|key<b>"] = "v"
	p := plan.Diff(log, rec, plan.DiffOptions{})
	rep := &Report{DryRun: true, Results: []Result{{Table: "main.s.`t|<i>`", Type: "EXTERNAL", Mode: ModeSync,
		Outcome: OutcomeFlagged, Status: StatusOutOfSync, WouldUpdate: true, Plan: &p, Actions: []string{"set-properties"}}}}
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, bad := range []string{"<script", "</details>", "<i>", "<b>", "`x`", "`t", "@admin", "*bold*", "[l]", "$x$", "\\|"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q unescaped:\n%s", bad, out)
		}
	}
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| ") && (strings.Contains(l, "owner.team") || strings.Contains(l, "evil")) {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("want the two property rows, each on one line; got %d:\n%s", len(rows), out)
	}
	for _, row := range rows {
		if n := strings.Count(row, "|"); n != 5 {
			t.Errorf("row has %d cell delimiters, want 5 (4 cells):\n%s", n, row)
		}
	}
	// The value is all there, as references a browser shows literally.
	if !strings.Contains(rows[1], "a&#124;b &lt;script&gt;alert(1)&lt;/script&gt; &#96;x&#96; &#96;&#96;y&#96;&#96;&#92;n&#64;admin") {
		t.Errorf("owner.team row does not hold the value's text:\n%s", rows[1])
	}
}

func TestMdTextTruncatesOnARune(t *testing.T) {
	s := strings.Repeat("é", mdMaxCell) // 2 bytes each
	got := mdText(s)
	if !strings.HasSuffix(got, fmt.Sprintf(" … (%d more bytes)", len(s)-mdMaxCell)) || strings.Count(got, "é") != mdMaxCell/2 {
		t.Errorf("mdText of %d bytes = %q", len(s), got)
	}
	if got := mdText("a\x01b\r\nc"); got != `a&#92;x01b<br>c` {
		t.Errorf("control characters: %q", got)
	}
}

// manyTables is a dry run with n tables to change, each with k property
// changes (non-destructive) and one removal (destructive).
func manyTables(t *testing.T, n, k int) *Report {
	t.Helper()
	log := testLog()
	log.Configuration = maps.Clone(log.Configuration)
	for i := range k {
		log.Configuration[fmt.Sprintf("p%03d", i)] = strings.Repeat("v", 40)
	}
	rec := faithful(t, testLog())
	rec.Properties["stray"] = "x"
	p := plan.Diff(log, rec, plan.DiffOptions{})
	rep := &Report{DryRun: true}
	for i := range n {
		rep.Results = append(rep.Results, Result{Table: fmt.Sprintf("main.s.t%04d", i), Type: "EXTERNAL", Mode: ModeSync,
			Outcome: OutcomeFlagged, Status: StatusOutOfSync, WouldUpdate: true, Plan: &p, Actions: []string{"set-properties"}})
	}
	return rep
}

// TestMarkdownFolds: a table's non-destructive rows past mdFoldRows and a
// section's tables past mdFoldTables are folded; destructive rows never.
func TestMarkdownFolds(t *testing.T) {
	rep := manyTables(t, mdFoldTables+3, mdFoldRows+5)
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "Cut") {
		t.Fatalf("a plan this small was cut:\n%s", out)
	}
	if got, want := strings.Count(out, "<details>"), strings.Count(out, "</details>"); got != want {
		t.Errorf("%d <details> opened, %d closed", got, want)
	}
	if !strings.Contains(out, "<details><summary>3 more tables</summary>") {
		t.Errorf("the tables past %d are not folded", mdFoldTables)
	}
	// Each table: its destructive row, then mdFoldRows rows, then a fold
	// with the rest. Whatever is folded, every row is in the output.
	if n := strings.Count(out, "more non-destructive changes of"); n != mdFoldTables+3 {
		t.Errorf("%d tables fold their rows, want %d", n, mdFoldTables+3)
	}
	if n := strings.Count(out, "⚠️ **destructive**"); n != mdFoldTables+3 {
		t.Errorf("%d destructive rows, want one per table", n)
	}
	first := out[strings.Index(out, "<code>main.s.t0000</code>"):strings.Index(out, "<code>main.s.t0001</code>")]
	fold := strings.Index(first, "<details>")
	if fold < 0 || strings.Count(first[:fold], "\n| ") != 1+mdFoldRows+1 { // header, destructive, mdFoldRows
		t.Errorf("rows shown before the fold:\n%s", first)
	}
	if strings.Index(first, "destructive**") > fold {
		t.Errorf("the destructive row is folded:\n%s", first)
	}
}

// TestMarkdownCap: a plan past the cap is cut at a whole row, under the
// limit, its folds closed, with a line saying how many tables were cut.
func TestMarkdownCap(t *testing.T) {
	rep := manyTables(t, 400, 30)
	var full bytes.Buffer
	if err := rep.writeMarkdown(&full, 1<<30); err != nil {
		t.Fatal(err)
	}
	if full.Len() <= MarkdownLimit {
		t.Fatalf("fixture too small: %d bytes", full.Len())
	}
	var buf bytes.Buffer
	if err := rep.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if buf.Len() > MarkdownLimit {
		t.Errorf("%d bytes, over the %d limit", buf.Len(), MarkdownLimit)
	}
	if got, want := strings.Count(out, "<details>"), strings.Count(out, "</details>"); got != want {
		t.Errorf("%d <details> opened, %d closed", got, want)
	}
	m := regexp.MustCompile(`✂️ \*\*Cut\*\*: (\d+) of 400 tables are not shown`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line saying what was cut:\n%s", out[len(out)-2000:])
	}
	shown := strings.Count(out, "more non-destructive changes of") // each whole table closes its fold
	cut, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if shown+cut != 400 && shown+cut != 401 { // the table cut in the middle may have shown its fold
		t.Errorf("%d tables shown whole, %d said cut: want 400 in all", shown, cut)
	}
	if !strings.Contains(out, "deltasync plan -o json") {
		t.Errorf("the cut line does not say how to see the rest")
	}
	if !strings.HasPrefix(out, "### deltasync plan: 400 to change (400 destructive)") {
		t.Errorf("summary line lost: %q", out[:120])
	}
}
