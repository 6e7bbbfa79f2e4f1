package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/testenv"
)

// TestDemo runs the README's first command in-process: it must finish with
// exit 0, sync the two external tables, flag the managed one, and leave the
// external tables in sync on the second plan.
func TestDemo(t *testing.T) {
	out := runDemo(t, "demo")
	checkDemoStory(t, out, "demo")
	if !strings.Contains(out, "deltasync plan --catalog-url") {
		t.Errorf("demo output lacks the next command:\n%s", out)
	}
}

// TestDemoAgainstRealServer tells the demo's story against the real Unity
// Catalog server (DELTASYNC_UC_URL): the same tables, the same drift (the
// managed record edited through the server's Delta API), the same plan, sync
// and second plan. The demo's catalog is gone afterwards.
func TestDemoAgainstRealServer(t *testing.T) {
	url := realServerURL(t)
	out := runDemo(t, "demo", "--catalog-url", url)
	m := regexp.MustCompile(`in a new catalog (deltasync_demo_[0-9a-f]{8})\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("demo output does not name its catalog:\n%s", out)
	}
	checkDemoStory(t, out, m[1])
	client, err := uc.New(url, uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cats, err := client.ListCatalogs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cats {
		if c.Name == m[1] {
			t.Errorf("the demo left its catalog %s behind", m[1])
		}
	}
}

// realServerURL is DELTASYNC_UC_URL; without it the test skips, or fails
// when DELTASYNC_REQUIRE_UC=1 (CI).
func realServerURL(t *testing.T) string {
	t.Helper()
	return testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC,
		"DELTASYNC_UC_URL not set: no real Unity Catalog server (`make uc-up` starts one)")
}

func runDemo(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// checkDemoStory asserts the plan, sync, metrics and second plan of a demo
// whose tables live in catalog cat.
func checkDemoStory(t *testing.T, out, cat string) {
	t.Helper()
	sections := strings.Split(out, "\n7. ")
	if len(sections) != 2 {
		t.Fatalf("demo output lacks the second plan:\n%s", out)
	}
	for _, want := range []string{
		"schema: add column \"discount\"",
		"3 tables: 0 unchanged, 2 would update, 1 flagged, 0 failed",
		"delta.logRetentionDuration",
		"3 tables: 0 unchanged, 2 synced, 1 flagged, 0 failed",
		`deltasync_table_info{mode="warn",sync_status="OutOfSync",table="` + cat + `.ops.events",table_type="MANAGED"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// After the sync only the managed table still drifts.
	for _, gone := range []string{`table="` + cat + `.sales.customers"} 1`, `table="` + cat + `.sales.orders"} 1`} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "deltasync_table_drift") && strings.Contains(line, gone) {
				t.Errorf("synced table still reports drift: %s", line)
			}
		}
	}
	again := sections[1]
	for _, want := range []string{
		cat + ".sales.customers (EXTERNAL, sync): in sync [Synced]",
		cat + ".sales.orders (EXTERNAL, sync): in sync [Synced]",
		cat + ".ops.events (MANAGED, warn): flagged [OutOfSync]",
		"3 tables: 2 unchanged, 0 would update, 1 flagged, 0 failed",
	} {
		if !strings.Contains(again, want) {
			t.Errorf("second plan lacks %q:\n%s", want, again)
		}
	}
}
