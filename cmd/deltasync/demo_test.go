package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemo runs the README's first command in-process: it must finish with
// exit 0, sync the two external tables, flag the managed one, and leave the
// external tables in sync on the second plan.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"demo"}, nil, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	sections := strings.Split(out, "\n7. ")
	if len(sections) != 2 {
		t.Fatalf("demo output lacks the second plan:\n%s", out)
	}
	for _, want := range []string{
		"schema: add column \"discount\"",
		"3 tables: 0 unchanged, 2 would update, 1 flagged, 0 failed",
		"delta.logRetentionDuration",
		"3 tables: 0 unchanged, 2 synced, 1 flagged, 0 failed",
		`deltasync_table_info{mode="warn",sync_status="OutOfSync",table="demo.ops.events",table_type="MANAGED"} 1`,
		"deltasync plan --catalog-url",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// After the sync only the managed table still drifts.
	for _, gone := range []string{`table="demo.sales.customers"} 1`, `table="demo.sales.orders"} 1`} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "deltasync_table_drift") && strings.Contains(line, gone) {
				t.Errorf("synced table still reports drift: %s", line)
			}
		}
	}
	again := sections[1]
	for _, want := range []string{
		"demo.sales.customers (EXTERNAL, sync): in sync [Synced]",
		"demo.sales.orders (EXTERNAL, sync): in sync [Synced]",
		"demo.ops.events (MANAGED, warn): flagged [OutOfSync]",
		"3 tables: 2 unchanged, 0 would update, 1 flagged, 0 failed",
	} {
		if !strings.Contains(again, want) {
			t.Errorf("second plan lacks %q:\n%s", want, again)
		}
	}
}
