package testcorpus

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadTreeAndCopyTree: CopyTree copies the kept files with their
// content, ReadTree reports them in lexical order with slash keys.
func TestReadTreeAndCopyTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"_delta_log/00000000000000000001.json":              "b",
		"_delta_log/00000000000000000000.json":              "a",
		"_delta_log/_staged_commits/00000000000000000002.x": "c",
		"part-0.parquet": "data",
	})
	CopyTree(t, src, dst, func(rel string) bool { return !strings.HasSuffix(rel, ".parquet") })
	var keys []string
	got := map[string]string{}
	ReadTree(t, dst, func(key string, data []byte) error {
		keys = append(keys, key)
		got[key] = string(data)
		return nil
	})
	want := map[string]string{
		"_delta_log/00000000000000000000.json":              "a",
		"_delta_log/00000000000000000001.json":              "b",
		"_delta_log/_staged_commits/00000000000000000002.x": "c",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("copied tree (-want +got):\n%s", d)
	}
	wantOrder := []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/_staged_commits/00000000000000000002.x"}
	if d := cmp.Diff(wantOrder, keys); d != "" {
		t.Errorf("ReadTree order (-want +got):\n%s", d)
	}
}

// TestCopyTreeNeverShowsATruncatedFile: a reader of a file CopyTree copies
// again (a log copied up to a later version while deltasync reads it) sees
// the whole file every time, never the empty or partial file a truncating
// write shows. With os.Create + io.Copy this failed within a few hundred
// rewrites.
func TestCopyTreeNeverShowsATruncatedFile(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	want := []byte(strings.Repeat(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n", 2000))
	if err := os.MkdirAll(filepath.Join(src, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("_delta_log", "00000000000000000000.json")
	if err := os.WriteFile(filepath.Join(src, name), want, 0o644); err != nil {
		t.Fatal(err)
	}
	CopyTree(t, src, dst, nil)

	var stop atomic.Bool
	done := make(chan int)
	go func() {
		bad := 0
		for !stop.Load() {
			got, err := os.ReadFile(filepath.Join(dst, name))
			if err != nil || !bytes.Equal(got, want) {
				bad++
			}
		}
		done <- bad
	}()
	for range 500 {
		CopyTree(t, src, dst, nil)
	}
	stop.Store(true)
	if bad := <-done; bad > 0 {
		t.Errorf("a concurrent reader saw %d incomplete copies of %s", bad, name)
	}
	entries, err := os.ReadDir(filepath.Join(dst, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("%d files in the copy's _delta_log, want only the commit (no temporary files left)", len(entries))
	}
	if fi, err := os.Stat(filepath.Join(dst, name)); err != nil || fi.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("copy's mode %v (%v), want readable by group and others as os.Create leaves it", fi.Mode(), err)
	}
}
