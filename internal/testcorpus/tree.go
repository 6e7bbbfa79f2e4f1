package testcorpus

import (
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
// creating directories as needed. Each file appears whole (written to a
// temporary name beside it, then renamed), as a writer's commit does: a
// test that copies more of a log while deltasync reads it (TestHMSRace
// copies versions 0..v again) must never show a reader a commit truncated
// to nothing. keep, when not nil, chooses the files to
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
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeAtomic(out, data)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeAtomic writes data to a temporary file in out's directory, named
// with a leading dot so no log listing takes it for a log file, and
// renames it to out.
func writeAtomic(out string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644) // as os.Create leaves it under the usual umask
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), out)
}
