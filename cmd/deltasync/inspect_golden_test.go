package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestInspectGolden compares the whole text and JSON output for a few
// corpus tables with testdata/inspect/*.golden (rewrite with -update).
// The table argument is relative, so the output does not depend on
// where the repository lives.
func TestInspectGolden(t *testing.T) {
	for _, tc := range []struct{ table, format string }{
		{"dv-with-columnmapping", "text"},
		{"table-with-columnmapping-mode-name", "text"},
		{"http_requests", "json"},
		{"table_failed_last_checkpoint_update", "json"},
	} {
		t.Run(tc.table+"."+tc.format, func(t *testing.T) {
			code, stdout, stderr := runInspect(t, "-o", tc.format, filepath.Join(testcorpus.Dir(t), tc.table))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden := filepath.Join("testdata", "inspect", tc.table+"."+tc.format+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if string(want) != stdout {
				t.Errorf("output differs from %s:\n got:\n%s\nwant:\n%s", golden, stdout, want)
			}
		})
	}
}
