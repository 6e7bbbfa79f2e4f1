package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func record(i int) Record {
	etag := "e" + string(rune('a'+i%26))
	return Record{Time: time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC), Table: "c.s.t", TableID: "u", EtagBefore: "x",
		EtagAfter: &etag, Outcome: OutcomeSynced, Actions: []string{"set-properties"}, DeltasyncVersion: "test"}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRecordShape(t *testing.T) {
	b, err := json.Marshal(Record{Time: time.Date(2026, 12, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Table: "c.s.t",
		Outcome: OutcomeHeld, DeltasyncVersion: "v"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["time"] != "2026-12-02T02:04:05Z" {
		t.Errorf("time = %v, want RFC 3339 in UTC", m["time"])
	}
	for _, k := range []string{"cycle", "etag_after"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if a, ok := m["actions"].([]any); !ok || len(a) != 0 {
		t.Errorf("actions = %v, want []", m["actions"])
	}
	if c, ok := m["changes"].([]any); !ok || len(c) != 0 {
		t.Errorf("changes = %v, want []", m["changes"])
	}
	if m["format_version"] != FormatVersion {
		t.Errorf("format_version = %v", m["format_version"])
	}
}

// TestWriterAppendsAndRotates writes records past MaxBytes: every record
// is one whole line in exactly one file, the files hold them in order,
// and no more than Backups rotated files are kept.
func TestWriterAppendsAndRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	line, _ := json.Marshal(record(0))
	w, err := Open(Options{Path: path, MaxBytes: int64(3*len(line) + 10), Backups: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := w.Write(record(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// 10 records, 3 a file: path has 1, .1 has 3, .2 has 3; the oldest 3 are gone.
	for name, want := range map[string]int{"audit.jsonl": 1, "audit.jsonl.1": 3, "audit.jsonl.2": 3} {
		if got := len(readLines(t, filepath.Join(dir, name))); got != want {
			t.Errorf("%s: %d records, want %d", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl.3")); !os.IsNotExist(err) {
		t.Errorf("audit.jsonl.3 kept past Backups: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v: want 0600", fi.Mode(), err)
	}
	// Reopening appends.
	w, err = Open(Options{Path: path, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(record(10)); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if got := len(readLines(t, path)); got != 2 {
		t.Errorf("after reopening: %d records, want 2", got)
	}
}

func TestWriterConcurrentLinesStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var stderr bytes.Buffer
	w, err := Open(Options{Path: path, Stderr: &lockedBuffer{b: &stderr}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := w.Write(record(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	_ = w.Close()
	if n := len(readLines(t, path)); n != 20 {
		t.Errorf("%d records in the file, want 20", n)
	}
	if n := strings.Count(stderr.String(), "\n"); n != 20 {
		t.Errorf("%d records on stderr, want 20", n)
	}
}

func TestOpenRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(Options{Path: dir}); err == nil || !strings.Contains(err.Error(), "audit file") {
		t.Errorf("Open(dir) = %v, want an audit file error", err)
	}
	if w, err := Open(Options{}); w != nil || err != nil {
		t.Errorf("Open(no destination) = %v, %v; want nil, nil", w, err)
	}
	var w *Writer
	if err := w.Write(record(0)); err != nil {
		t.Errorf("nil Writer: %v", err)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
