package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestRegisterPlanOnce: a register rule's tables are shown by plan as
// would register (exit 2), created by once (exit 0), in sync at the next
// once (exit 0, nothing sent); a flagged candidate makes once exit 2.
func TestRegisterPlanOnce(t *testing.T) {
	tc := newTestCatalog(t)
	lake := filepath.Join(t.TempDir(), "lake")
	for _, tb := range []string{"orders", "events"} {
		testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), "delta-0.8.0"), filepath.Join(lake, "s", tb), nil)
	}
	cfg := filepath.Join(t.TempDir(), "deltasync.yaml")
	write := func(extra string) {
		body := "catalog:\n  url: " + tc.srv.URL() + "\n" +
			"storage:\n  allowed_locations: ['file://" + filepath.ToSlash(lake) + "/**']\n" +
			"register:\n  rules:\n    - location: 'file://" + filepath.ToSlash(lake) + "/{schema}/{table}'\n      name: 'cat.{schema}.{table}'\n" + extra
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	base := []string{"--config", cfg, "--log-level", "error"}

	code, out, errOut := runCLI(t, nil, append([]string{"plan", "-o", "json"}, base...)...)
	if code != 2 {
		t.Fatalf("plan: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Tables []struct {
			Table, Outcome string
			Register       map[string]any
		}
		Summary map[string]int
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Summary["would_register"] != 2 || len(rep.Tables) != 2 || rep.Tables[0].Outcome != "would_register" || rep.Tables[0].Register["location"] == nil {
		t.Errorf("plan JSON: %s", out)
	}
	code, out, _ = runCLI(t, nil, append([]string{"plan"}, base...)...)
	if code != 2 || !strings.Contains(out, "cat.s.events (EXTERNAL, sync): would register") || !strings.Contains(out, "2 would register") {
		t.Errorf("plan text: exit %d\n%s", code, out)
	}
	if n := tc.updates(); n != 0 {
		t.Errorf("plan sent %d updates", n)
	}

	code, out, errOut = runCLI(t, nil, append([]string{"once"}, base...)...)
	if code != 0 || !strings.Contains(out, "2 registered") {
		t.Fatalf("once: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, nil, append([]string{"once"}, base...)...)
	if code != 0 || !strings.Contains(out, "2 tables: 2 unchanged, 0 synced, 0 flagged, 0 failed") || !strings.Contains(out, "0 registered") {
		t.Errorf("second once: exit %d\n%s", code, out)
	}

	// A name taken at another location: flagged, exit 2.
	testcorpus.CopyTree(t, filepath.Join(testcorpus.Dir(t), "delta-0.8.0"), filepath.Join(lake, "s", "taken"), nil)
	tc.register("delta-0.8.0", "taken")
	code, out, _ = runCLI(t, nil, append([]string{"once", "--allow-location", allowTemp()}, base...)...)
	if code != 2 || !strings.Contains(out, "cat.s.taken") || !strings.Contains(out, "already exists at") {
		t.Errorf("conflict: exit %d, want 2\n%s", code, out)
	}
}

func TestRegisterConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "deltasync.yaml")
	body := "catalog:\n  url: http://127.0.0.1:1/api/2.1/unity-catalog\n" +
		"storage:\n  allowed_locations: ['s3://lake/warehouse/**']\n" +
		"register:\n  rules:\n    - location: 's3://other/{schema}/{table}'\n      name: 'main.{schema}.{table}'\n" +
		"    - location: 's3://lake/warehouse/{schema}/{table}'\n      name: 'main.{table}'\n" +
		"    - locaton: 'x'\n  max_per_cycle: -1\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, nil, "check-config", "--config", cfg)
	all := out + errOut
	for _, want := range []string{
		"register.rules[2].locaton: unknown key",
	} {
		if code != 1 || !strings.Contains(all, want) {
			t.Errorf("exit %d, want 1 and %q:\n%s", code, want, all)
		}
	}
	body = strings.Replace(body, "    - locaton: 'x'\n", "", 1)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, nil, "check-config", "--config", cfg)
	all = out + errOut
	for _, want := range []string{
		"register.rules[0].location: \"s3://other/{schema}/{table}\" lies outside storage.allowed_locations",
		"register.rules[1].name: \"main.{table}\": want catalog.schema.table",
		"register.max_per_cycle: must not be negative",
	} {
		if code != 1 || !strings.Contains(all, want) {
			t.Errorf("exit %d, want 1 and %q:\n%s", code, want, all)
		}
	}
}
