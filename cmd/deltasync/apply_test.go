package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deltasync/deltasync/catalog"
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

// TestApplyNeedsNoTableRule: a saved plan names its tables, so apply runs
// from a config holding only the catalog (URL and credentials) and the
// audit file, no tables[] rule; plan, which reads logs, still needs one.
// The catalog sits behind a proxy that refuses requests without the token,
// so the credentials are shown to come from that config.
func TestApplyNeedsNoTableRule(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	backend, err := url.Parse(tc.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var unauthorized atomic.Int32
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: backend.Scheme, Host: backend.Host})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			unauthorized.Add(1)
			http.Error(w, `{"error_code":"UNAUTHENTICATED","message":"no token"}`, http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	catURL := proxy.URL + backend.Path

	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "token", "s3cret\n")
	if err := os.Chmod(tokenFile, 0o600); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	code, out, errOut := runCLI(t, nil, "plan", "--catalog-url", catURL, "--token-file", tokenFile, "--include", "cat.s.*",
		"--on-destructive", "hold", "--out", planFile, "--log-level", "error", "--allow-location", allowTemp())
	if code != 2 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	auditFile := filepath.Join(dir, "audit.jsonl")
	cfg := writeFile(t, dir, "apply.yaml", "catalog:\n  url: "+catURL+"\n  token_file: "+tokenFile+"\naudit:\n  file: "+auditFile+"\n")

	// plan from the same config has no tables to read: still an error.
	code, _, errOut = runCLI(t, nil, "plan", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "tables: at least one rule") {
		t.Errorf("plan without a tables rule: exit %d\n%s", code, errOut)
	}

	tc.srv.ResetRequests()
	code, out, errOut = runCLI(t, nil, "apply", planFile, "--config", cfg, "--log-level", "error")
	if code != 0 || tc.updates() != 1 || !strings.Contains(out, "cat.s.t: applied: remove-properties") {
		t.Fatalf("apply with only the catalog configured: exit %d, %d updates\n%s\n%s", code, tc.updates(), out, errOut)
	}
	if n := unauthorized.Load(); n != 0 {
		t.Errorf("%d requests reached the catalog without the config's token", n)
	}
	if got := tc.srv.Requests(); len(got) != 1 {
		t.Errorf("apply sent %d requests, want the plan's one update: %+v", len(got), got)
	}
	lt, err := tc.client.LoadTable(context.Background(), catalog.TableName{Catalog: "cat", Schema: "s", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lt.Metadata.Properties["stray"]; ok {
		t.Errorf("stray property still in the record after apply: %v", lt.Metadata.Properties)
	}
	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Outcome, Command, Table string
		EtagAfter               *string `json:"etag_after"`
	}
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 1 {
		t.Fatalf("audit file has %d records, want 1:\n%s", len(lines), data)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != "synced" || rec.Command != "apply" || rec.Table != "cat.s.t" || rec.EtagAfter == nil || *rec.EtagAfter != lt.Metadata.Etag {
		t.Errorf("audit record %+v, want apply synced cat.s.t ending at etag %s", rec, lt.Metadata.Etag)
	}
}
