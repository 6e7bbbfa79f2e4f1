package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
)

func TestPlanExitCodes(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	args := []string{"plan", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--log-level", "error", "--allow-location", allowTemp()}

	code, out, errOut := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("in sync: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "in sync") || !strings.Contains(out, "deltasync: 1 tables: 1 unchanged") {
		t.Errorf("text output:\n%s", out)
	}

	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	tc.srv.ResetRequests()
	code, out, errOut = runCLI(t, nil, args...)
	if code != 2 {
		t.Fatalf("drift: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "would update") || !strings.Contains(out, "property stray: remove") {
		t.Errorf("text output:\n%s", out)
	}
	code, out, _ = runCLI(t, nil, append(args, "-o", "json")...)
	var doc struct {
		FormatVersion string `json:"format_version"`
		Tables        []struct {
			Table   string   `json:"table"`
			Actions []string `json:"actions"`
		} `json:"tables"`
	}
	if code != 2 || json.Unmarshal([]byte(out), &doc) != nil || doc.FormatVersion != "2" || len(doc.Tables) != 1 {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	if n := tc.updates(); n != 0 {
		t.Errorf("plan sent %d updates", n)
	}

	down := spectest.NewServer()
	url := down.URL()
	down.Close()
	code, _, errOut = runCLI(t, nil, "plan", "--catalog-url", url, "--include", "cat.s.*", "--log-level", "error")
	if code != 1 {
		t.Errorf("catalog down: exit %d, want 1\n%s", code, errOut)
	}
	code, _, _ = runCLI(t, nil, "plan", "--include", "cat.s.*")
	if code != 1 {
		t.Errorf("bad config: exit %d, want 1", code)
	}
}

// TestPlanMarkdown: plan -o markdown writes only the Markdown report (its
// summary line first, no text summary after it) with plan's exit codes;
// once accepts it too; another format is refused naming the three.
func TestPlanMarkdown(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	args := []string{"plan", "-o", "markdown", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--log-level", "error", "--allow-location", allowTemp()}

	code, out, errOut := runCLI(t, nil, args...)
	if code != 0 || !strings.HasPrefix(out, "### deltasync plan: 0 to change (0 destructive), 0 held, 0 flagged, 0 failed, 1 in sync\n") ||
		!strings.Contains(out, "**Exit 0**: in sync") || strings.Contains(out, "deltasync: 1 tables") {
		t.Fatalf("in sync: exit %d\n%s\n%s", code, out, errOut)
	}
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x|<b>" })
	code, out, errOut = runCLI(t, nil, args...)
	if code != 2 || !strings.HasPrefix(out, "### deltasync plan: 1 to change (1 destructive)") || !strings.Contains(out, "**Exit 2**: drift found") ||
		!strings.Contains(out, "| ⚠️ **destructive** | <code>property stray</code>: remove | <code>&quot;x&#124;&lt;b&gt;&quot;</code> | *(removed)* |") {
		t.Fatalf("drift: exit %d\n%s\n%s", code, out, errOut)
	}
	tc.srv.ResetRequests()
	code, out, errOut = runCLI(t, nil, append([]string{"once", "--on-destructive", "hold"}, args[1:]...)...)
	if code != 2 || !strings.HasPrefix(out, "### deltasync: 0 synced (0 destructive), 1 held,") || tc.updates() != 0 {
		t.Fatalf("once -o markdown under hold: exit %d, %d updates\n%s\n%s", code, tc.updates(), out, errOut)
	}
	// A rule that selects nothing fails plan: the Markdown says so last.
	code, out, errOut = runCLI(t, nil, "plan", "-o", "markdown", "--catalog-url", tc.srv.URL(), "--include", "cat.nope.*", "--log-level", "error", "--allow-location", allowTemp())
	if code != 1 || !strings.HasSuffix(out, "**Exit 1**: 1 table rule(s) selected no table: check the catalog, schema and table names (the log names the rules); pass `--allow-empty` if that is expected.\n") {
		t.Errorf("a rule selecting nothing: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, nil, append([]string{"plan"}, append(args[3:], "-o", "yaml")...)...)
	if code != 1 || !strings.Contains(errOut, `-o "yaml": want text, json or markdown`) {
		t.Errorf("-o yaml: exit %d\n%s", code, errOut)
	}
}
