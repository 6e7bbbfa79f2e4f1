// Package testcorpus locates the shared corpus of real Delta logs
// (../shared/testdata/delta-logs next to the repository) for tests of every
// package. It imports nothing from the project, so deltalog, catalog, sync
// and cmd tests can all use it.
package testcorpus

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the corpus directory, relative to the test's working directory
// (the package directory) when possible, so paths printed by tests read as
// before ("../../shared/testdata/delta-logs"). A missing corpus fails the
// test rather than skipping it, naming the path that was looked for.
func Dir(t testing.TB) string {
	t.Helper()
	return dirAt(t, absDir())
}

// dirAt is Dir for the corpus expected at abs.
func dirAt(t testing.TB, abs string) string {
	t.Helper()
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("test corpus missing: %s: %v (check out the shared reference material next to the repository)", abs, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil {
		return abs
	}
	return rel
}

// absDir is <repo>/../shared/testdata/delta-logs, found from this file's
// location so it does not depend on the calling package's depth.
func absDir() string {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(repo, "..", "shared", "testdata", "delta-logs")
}
