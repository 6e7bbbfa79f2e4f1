package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMaxLoadMiB: storage.max_load_mib is the memory budget of every
// table's log read; a table whose log needs more at once is flagged naming
// the file and the budget, and its record is not written.
func TestMaxLoadMiB(t *testing.T) {
	tc := newTestCatalog(t)
	dir := tc.register("delta-0.8.0", "big")
	// A commit whose metaData line is over 1 MiB: 3 MiB of format options
	// (a description that long would be refused before sending: Unity
	// Catalog stores at most 65,535 characters of comment).
	commit := `{"commitInfo":{"timestamp":1700000000000}}` + "\n" +
		`{"metaData":{"id":"big","format":{"provider":"parquet","options":{"pad":"` + strings.Repeat("d", 3<<20) + `"}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"value\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"description":"a log line over 1 MiB"}}` + "\n"
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			last = e.Name()
		}
	}
	next := filepath.Join(dir, "_delta_log", nextCommitName(t, last))
	if err := os.WriteFile(next, []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "deltasync.yaml", "storage:\n  max_load_mib: 1\n")
	before := tc.updates()
	base := []string{"once", "--catalog-url", tc.srv.URL(), "--log-level", "error", "--allow-location", allowTemp(), "--include", "cat.s.big"}
	code, out, errOut := runCLI(t, nil, append(base, "--config", cfg)...)
	if code != 2 || !strings.Contains(out, "memory budget") || !strings.Contains(out, filepath.Base(next)) {
		t.Errorf("max_load_mib 1: exit %d, want 2 with the budget and %s named\n%s\n%s", code, filepath.Base(next), out, errOut)
	}
	if n := tc.updates() - before; n != 0 {
		t.Errorf("%d updates sent for a table over its budget", n)
	}
	// The default budget (256 MiB) reads it and syncs the new description.
	code, out, errOut = runCLI(t, nil, base...)
	if code != 0 || tc.updates()-before != 1 {
		t.Errorf("default budget: exit %d, %d updates\n%s\n%s", code, tc.updates()-before, out, errOut)
	}

	code, _, errOut = runCLI(t, nil, "check-config", "--config", writeFile(t, t.TempDir(), "bad.yaml", "catalog:\n  url: http://x/api/2.1/unity-catalog\nstorage:\n  max_load_mib: 0\n"))
	if code != 1 || !strings.Contains(errOut, "storage.max_load_mib 0: must be positive") {
		t.Errorf("max_load_mib 0: exit %d\n%s", code, errOut)
	}
}

// nextCommitName is the commit file name after name (a commit's).
func nextCommitName(t *testing.T, name string) string {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSuffix(name, ".json"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%020d.json", v+1)
}
