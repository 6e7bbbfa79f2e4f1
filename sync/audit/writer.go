package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Defaults of Options.
const (
	DefaultMaxBytes = 100 << 20 // 100 MiB
	DefaultBackups  = 10
)

// Options says where records go.
type Options struct {
	// Path is the JSON-lines file records are appended to ("" for none).
	Path string
	// MaxBytes rotates the file before a record would take it past this
	// size (default DefaultMaxBytes): Path becomes Path.1, Path.1 becomes
	// Path.2, ..., and the oldest past Backups is removed.
	MaxBytes int64
	// Backups is how many rotated files are kept (default DefaultBackups).
	Backups int
	// Stderr, when set, also gets every record, one line each.
	Stderr io.Writer
}

// Writer appends records. It is safe for concurrent use; each Write is
// one line, fsynced before Write returns. Why not a rotating-log library
// (lumberjack): it offers no fsync of the file it writes (its file handle
// is private and it has no Sync), and an audit record that a crash can
// lose after deltasync went on to the next table is not an audit trail.
type Writer struct {
	opts Options
	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating, mode 0600) the audit file for appending. A nil
// Writer and nil error are returned when opts names no destination.
func Open(opts Options) (*Writer, error) {
	if opts.Path == "" && opts.Stderr == nil {
		return nil, nil
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Backups <= 0 {
		opts.Backups = DefaultBackups
	}
	w := &Writer{opts: opts}
	if opts.Path != "" {
		if err := w.open(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.opts.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("audit file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return fmt.Errorf("audit file %s: not a regular file", w.opts.Path)
	}
	w.f, w.size = f, fi.Size()
	return nil
}

// Write appends one record (a Record, or any value that marshals to one
// JSON object) as one line and fsyncs the file.
func (w *Writer) Write(rec any) error {
	if w == nil {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	if w.opts.Path != "" {
		errs = append(errs, w.append(line))
	}
	if w.opts.Stderr != nil {
		_, err := w.opts.Stderr.Write(line)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (w *Writer) append(line []byte) error {
	if w.f == nil {
		if err := w.open(); err != nil { // a rotation that failed half way
			return err
		}
	}
	if w.size > 0 && w.size+int64(len(line)) > w.opts.MaxBytes {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(line)
	w.size += int64(n)
	if err != nil {
		return fmt.Errorf("audit file %s: %w", w.opts.Path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("audit file %s: fsync: %w", w.opts.Path, err)
	}
	return nil
}

// rotate closes the file, shifts Path.(i) to Path.(i+1) (dropping the
// one past Backups), renames Path to Path.1, syncs the directory so the
// renames survive a crash, and opens a new Path.
func (w *Writer) rotate() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("audit file %s: %w", w.opts.Path, err)
	}
	w.f = nil
	p := w.opts.Path
	if err := os.Remove(p + "." + strconv.Itoa(w.opts.Backups)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("audit file rotation: %w", err)
	}
	for i := w.opts.Backups - 1; i >= 1; i-- {
		from := p + "." + strconv.Itoa(i)
		if err := os.Rename(from, p+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("audit file rotation: %w", err)
		}
	}
	if err := os.Rename(p, p+".1"); err != nil {
		return fmt.Errorf("audit file rotation: %w", err)
	}
	if d, err := os.Open(filepath.Dir(p)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return w.open()
}

// Close closes the file.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
