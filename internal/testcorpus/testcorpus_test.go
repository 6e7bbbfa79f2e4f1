package testcorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirFindsCorpus: Dir names a directory holding the corpus manifest.
func TestDirFindsCorpus(t *testing.T) {
	dir := Dir(t)
	if filepath.IsAbs(dir) {
		t.Errorf("Dir = %q, want a path relative to the package directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.tsv")); err != nil {
		t.Errorf("Dir = %q has no manifest.tsv: %v", dir, err)
	}
}

// fatalRecorder records Fatalf instead of stopping the test.
type fatalRecorder struct {
	testing.TB
	msgs    []string
	skipped bool
}

func (f *fatalRecorder) Helper()              {}
func (f *fatalRecorder) Skipf(string, ...any) { f.skipped = true }
func (f *fatalRecorder) Skip(...any)          { f.skipped = true }
func (f *fatalRecorder) SkipNow()             { f.skipped = true }
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// TestDirFailsWhenMissing: a missing corpus fails (never skips) and the
// message names the path looked for.
func TestDirFailsWhenMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-corpus")
	rec := &fatalRecorder{TB: t}
	dirAt(rec, missing)
	if rec.skipped {
		t.Error("a missing corpus skipped the test")
	}
	if len(rec.msgs) != 1 || !strings.Contains(rec.msgs[0], missing) {
		t.Fatalf("Fatalf calls = %q, want one naming %s", rec.msgs, missing)
	}
}
