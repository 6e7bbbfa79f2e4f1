package deltalog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deltasync/deltasync/deltalog"
)

func TestListDirs(t *testing.T) {
	root := t.TempDir()
	// Object stores have no empty directories: each holds a file.
	for _, d := range []string{"b/_delta_log", "a/x/y", "c", "_delta_log"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ page, lists int }{{0, 1}, {1, 5}, {2, 3}} {
		var got []string
		lists := 0
		err := deltalog.ListDirs(context.Background(), "file://"+root, tc.page, func(names []string) error {
			got = append(got, names...)
			return nil
		}, deltalog.WithObserver(func(op string, _ time.Duration, _ error) {
			if op == "list" {
				lists++
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		// Directories only, the table's own _delta_log left out, one
		// level deep.
		if !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("page %d: %v, want [a b c]", tc.page, got)
		}
		// Five entries (a/, b/, c/, _delta_log/, file.txt) in pages.
		if lists != tc.lists {
			t.Errorf("page %d: %d LIST requests, want %d", tc.page, lists, tc.lists)
		}
	}
	// A directory that does not exist has no subdirectories.
	if err := deltalog.ListDirs(context.Background(), filepath.Join(root, "none"), 0, func([]string) error {
		t.Error("called for a missing directory")
		return nil
	}); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}
