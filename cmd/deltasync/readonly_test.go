package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog/uctest"
)

// TestPlanReadOnlyWithoutDeltaAPI runs plan and once end to end against a
// catalog without the Delta API (uctest with it switched off; the real
// server has one): drift is flagged with the reason, never written, and
// the output says why in one line.
func TestPlanReadOnlyWithoutDeltaAPI(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	tc.mutate("t", func(tb *uctest.Table) { tb.Properties["stray"] = "x" })
	tc.srv.SetDeltaAPI(false)
	tc.srv.ResetRequests()
	line := "catalog cat has no Delta API (getConfig answers 404): read-only, drift is flagged, never written"
	for _, cmd := range []string{"plan", "once"} {
		args := []string{cmd, "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--log-level", "error", "--allow-location", allowTemp()}
		code, out, errOut := runCLI(t, nil, args...)
		if code != 2 {
			t.Fatalf("%s: exit %d, want 2 (drift)\n%s\n%s", cmd, code, out, errOut)
		}
		for _, want := range []string{line + "\n", "reason: catalog has no Delta API: read-only, drift is flagged, never written",
			"property stray: remove", "1 flagged", "(read-only: no Delta API)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", cmd, want, out)
			}
		}
		if strings.Contains(out, "would send") || strings.Contains(out, "sent:") {
			t.Errorf("%s offers to write a read-only catalog:\n%s", cmd, out)
		}
		code, out, _ = runCLI(t, nil, append(args, "-o", "json")...)
		var doc struct {
			ReadOnly []string `json:"read_only"`
		}
		if code != 2 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.ReadOnly) != 1 || doc.ReadOnly[0] != line {
			t.Errorf("%s json: exit %d, read_only %q\n%s", cmd, code, doc.ReadOnly, out)
		}
	}
	if n := tc.updates(); n != 0 {
		t.Errorf("%d updates sent to a catalog without the Delta API", n)
	}
	if tb, _ := tc.srv.Table("cat.s.t"); tb.Properties["stray"] != "x" {
		t.Errorf("the stray property was removed")
	}
}
