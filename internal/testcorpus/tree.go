package testcorpus

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// ReadTree calls fn with every file under root, in lexical order, keyed by
// its slash-separated path relative to root. An error (from the walk or from
// fn) fails the test.
func ReadTree(t testing.TB, root string, fn func(key string, data []byte) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// CopyTree copies every file under src to the same relative path under dst,
// creating directories as needed. keep, when not nil, chooses the files to
// copy by their path relative to src. An error fails the test.
func CopyTree(t testing.TB, src, dst string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if keep != nil && !keep(rel) {
			return nil
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, in); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
