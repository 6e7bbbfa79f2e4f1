package deltalog

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is through a *LogError.
var (
	// ErrNotATable: the location has no _delta_log with any commit or checkpoint.
	ErrNotATable = errors.New("not a Delta table")
	// ErrVersionGap: commits needed for the latest snapshot are missing.
	ErrVersionGap = errors.New("log versions are not contiguous")
	// ErrUnsupportedFeature: the protocol needs a reader version or reader
	// feature this package does not understand.
	ErrUnsupportedFeature = errors.New("unsupported Delta protocol")
	// ErrMissingProtocol: no protocol action in the log segment.
	ErrMissingProtocol = errors.New("no protocol action found")
	// ErrMissingMetadata: no metaData action in the log segment.
	ErrMissingMetadata = errors.New("no metaData action found")
	// ErrCorrupt: a log file is malformed, truncated or unreadable.
	ErrCorrupt = errors.New("corrupt log file")
)

// LogError is the error returned for a log that cannot be read or is
// refused. It names the operation, the table, the version and file involved
// (and the 1-based line for JSON files) and wraps the reason, which is one
// of the sentinels above or a storage error.
type LogError struct {
	Op      string // "load", "refresh", "read", ...
	Table   string // table name or URL (credentials redacted)
	Version int64  // log version concerned, -1 when none
	File    string // key under the table root, e.g. "_delta_log/00000000000000000003.json"
	Line    int    // 1-based line in a JSON file, 0 when not applicable
	Err     error
}

// Error formats the error as "deltalog: op table: file:line (version v):
// reason", leaving out the parts that are not set (never an empty ": ").
func (e *LogError) Error() string {
	var b strings.Builder
	b.WriteString("deltalog: ")
	b.WriteString(e.Op)
	if e.Table != "" {
		b.WriteString(" ")
		b.WriteString(e.Table)
	}
	var where strings.Builder
	if e.File != "" {
		where.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&where, ":%d", e.Line)
		}
	}
	if e.Version >= 0 {
		if where.Len() > 0 {
			where.WriteString(" ")
		}
		fmt.Fprintf(&where, "(version %d)", e.Version)
	}
	if where.Len() > 0 {
		b.WriteString(": ")
		b.WriteString(where.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the reason.
func (e *LogError) Unwrap() error { return e.Err }

// reason wraps a sentinel with detail: errors.Is(reason(s, ...), s) holds.
func reason(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// fileErr is a partially filled LogError raised while reading one file;
// the caller completes Op and Table.
func fileErr(version int64, file string, line int, err error) *LogError {
	return &LogError{Version: version, File: file, Line: line, Err: err}
}

// baseName is the last element of a slash-separated key.
func baseName(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}
