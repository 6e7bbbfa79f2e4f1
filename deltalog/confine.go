package deltalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gocloud.dev/blob"
)

// A local table is read through fileblob, which follows symlinks wherever
// they lead. A table directory may hold symlinks planted by whoever can
// write to it, pointing at files only deltasync's user may read; the log
// parser would then copy what it finds there (schema, properties) into the
// catalog. So every key of a local table is first resolved through an
// os.Root of the table directory, which refuses any symlink leaving it.

// localDir returns the directory of a local table URL (a plain path,
// file:/p or file:///p) and whether rawURL is one.
func localDir(rawURL string) (string, bool) {
	if !strings.Contains(rawURL, "://") {
		return rawURL, rawURL != ""
	}
	if len(rawURL) >= 7 && strings.EqualFold(rawURL[:7], "file://") {
		rest := rawURL[7:]
		if strings.HasPrefix(rest, "localhost/") {
			rest = rest[len("localhost"):]
		}
		return rest, strings.HasPrefix(rest, "/")
	}
	return "", false
}

// hadoopFile rewrites the Hadoop spelling file:/p (one slash, what Spark
// writes) as file:///p, so it names the absolute path /p, never a path
// relative to the working directory.
func hadoopFile(rawURL string) string {
	if len(rawURL) > 5 && strings.EqualFold(rawURL[:5], "file:") && !strings.HasPrefix(rawURL[5:], "//") {
		return "file://" + rawURL[5:]
	}
	return rawURL
}

// localRoot is the directory a local table's reads are confined to. It
// holds no file descriptor between reads: a process keeping tens of
// thousands of tables open (the sync daemon) would otherwise hold one
// descriptor per table and run out of them. Each check opens an os.Root of
// the directory for its duration.
type localRoot struct {
	dir string // absolute
}

// Stat is os.Root.Stat in a root opened for this call.
func (r *localRoot) Stat(name string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Stat(name)
}

// Close releases nothing (see localRoot); it is there for Table.Close.
func (r *localRoot) Close() error { return nil }

// openRoot returns the root confining a local table's reads (nil for
// other URLs), after checking the directory can be opened as one.
func openRoot(rawURL string) (*localRoot, error) {
	dir, ok := localDir(rawURL)
	if !ok {
		return nil, nil
	}
	abs, err := filepath.Abs(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &localRoot{dir: abs}, root.Close()
}

// ErrOutsideRoot means a local table's log file or directory is a symlink
// that leaves the table directory; it is not followed.
var ErrOutsideRoot = errors.New("symlink leaves the table directory; not followed")

// confine checks that key of a local table resolves inside the table
// directory. Keys that do not exist pass (the read reports them); the
// target of an escaping symlink is never looked at, so the error is the
// same whether or not it exists.
func (t *Table) confine(key string) error {
	if t.root == nil {
		return nil
	}
	_, err := t.root.Stat(filepath.FromSlash(strings.TrimSuffix(key, "/")))
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return outsideRoot(key)
}

// outsideRoot is the error for key of a local table leaving its directory.
func outsideRoot(key string) error {
	return fmt.Errorf("%w: %w", ErrCorrupt, &fs.PathError{Op: "open", Path: key, Err: ErrOutsideRoot})
}

// listLog lists the files of the table's _delta_log/ whose keys sort after
// startAfter, in key order, through an os.Root of the table directory: a
// _delta_log that is a symlink leaving it is refused as confine refuses it,
// and a missing one lists nothing (as fileblob does). fileblob has no
// start-after: it walks the whole directory and, for every file, stats it
// and tries to open an attributes file beside it, two system calls per log
// file for a daemon that LISTs every table each cycle to find nothing new.
// Here the names are read with getdents and only those after startAfter
// are stat'ed. Directories are left out (Table.list skips them), as are
// fileblob's own attribute files and names fileblob would unescape (no log
// file has one).
func (r *localRoot) listLog(startAfter string) ([]*blob.ListObject, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer root.Close()
	dirName := strings.TrimSuffix(logDir, "/")
	d, err := root.Open(dirName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, err
	case err != nil:
		return nil, outsideRoot(logDir)
	}
	defer d.Close()
	// Names only: ReadDir would lstat every entry on file systems that do
	// not report entry types (DT_UNKNOWN).
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*blob.ListObject
	for _, name := range names {
		if logDir+name <= startAfter || strings.HasSuffix(name, ".attrs") || strings.Contains(name, "__0x") {
			continue
		}
		fi, err := root.Lstat(filepath.Join(dirName, name)) // as fileblob's listing, but confined
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the directory was read
		}
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			continue
		}
		out = append(out, &blob.ListObject{Key: logDir + name, Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return out, nil
}
