//go:build linux

package deltalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestOpenLocalTablesHoldNoDescriptor: a daemon keeps every table it syncs
// open; for local tables that must not cost a file descriptor each (the
// symlink confinement's os.Root is opened per read, not per table).
func TestOpenLocalTablesHoldNoDescriptor(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	dir, err := filepath.Abs(filepath.Join(testcorpus.Dir(t), "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	before := fds()
	var tables []*Table
	for range 50 {
		tbl, err := Open(context.Background(), "file://"+dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Load(context.Background(), LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tbl)
	}
	if after := fds(); after-before >= 10 {
		t.Errorf("50 open local tables hold %d more file descriptors, want none per table", after-before)
	}
	if _, err := Open(context.Background(), "file://"+filepath.Join(dir, "missing")); err == nil {
		t.Error("Open of a missing local directory succeeded, want the error Open gave before")
	}
	for _, tbl := range tables {
		_ = tbl.Close()
	}
}
