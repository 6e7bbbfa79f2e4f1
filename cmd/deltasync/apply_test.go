package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

// TestHoldPlanOutApply is change control from the command line: once
// under --on-destructive hold exits 2 and sends nothing for a table with a
// destructive change; plan --out saves its held update; apply sends it,
// exits 0, and writes the audit file; a stale plan is refused (exit 1,
// naming the table); a bad plan file sends nothing.
func TestHoldPlanOutApply(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	base := []string{"--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--log-level", "error", "--allow-location", allowTemp()}

	tc.srv.ResetRequests()
	code, out, errOut := runCLI(t, nil, append([]string{"once", "--on-destructive", "hold", "--audit-file", auditFile}, base...)...)
	if code != 2 || tc.updates() != 0 || !strings.Contains(out, "held: destructive") || !strings.Contains(out, "destructive: property stray: remove") {
		t.Fatalf("once under hold: exit %d, %d updates\n%s\n%s", code, tc.updates(), out, errOut)
	}
	planFile := filepath.Join(dir, "plan.json")
	code, out, errOut = runCLI(t, nil, append([]string{"plan", "--on-destructive", "hold", "--out", planFile}, base...)...)
	if code != 2 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, nil, append([]string{"apply", planFile, "--audit-file", auditFile}, base...)...)
	if code != 0 || tc.updates() != 1 || !strings.Contains(out, "applied: remove-properties") {
		t.Fatalf("apply: exit %d, %d updates\n%s\n%s", code, tc.updates(), out, errOut)
	}
	var outcomes []string
	f, err := os.Open(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Outcome string `json:"outcome"`
			Command string `json:"command"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, r.Command+":"+r.Outcome)
	}
	f.Close()
	if strings.Join(outcomes, ",") != "once:held,apply:synced" {
		t.Errorf("audit trail %v, want once:held, apply:synced", outcomes)
	}
	// The same plan again: the record moved (its etag rolled), so stale.
	code, out, errOut = runCLI(t, nil, append([]string{"apply", planFile}, base...)...)
	if code != 1 || !strings.Contains(out, "plan again") || !strings.Contains(errOut, "not applied: cat.s.t") {
		t.Errorf("stale apply: exit %d\n%s\n%s", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	data, _ := os.ReadFile(planFile)
	_ = os.WriteFile(bad, data[:len(data)/2], 0o600)
	tc.srv.ResetRequests()
	code, _, errOut = runCLI(t, nil, append([]string{"apply", bad}, base...)...)
	if code != 1 || tc.updates() != 0 || !strings.Contains(errOut, "truncated") {
		t.Errorf("truncated plan: exit %d, %d updates\n%s", code, tc.updates(), errOut)
	}
	other := append([]string{"apply", planFile}, base...)
	other[3] = strings.Replace(tc.srv.URL(), "127.0.0.1", "localhost", 1)
	code, _, errOut = runCLI(t, nil, other...)
	if code != 1 || tc.updates() != 0 || !strings.Contains(errOut, "made for catalog") {
		t.Errorf("another catalog: exit %d, %d updates\n%s", code, tc.updates(), errOut)
	}
}
