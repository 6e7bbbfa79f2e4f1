package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// corpusFiles returns the contents of every corpus log file whose parsed
// kind is one of kinds (files under _delta_log and _staged_commits).
func corpusFiles(t testing.TB, kinds ...pathKind) [][]byte {
	t.Helper()
	var out [][]byte
	matches, _ := filepath.Glob(filepath.Join(testcorpus.Dir(t), "*", "_delta_log", "*"))
	staged, _ := filepath.Glob(filepath.Join(testcorpus.Dir(t), "*", "_delta_log", "_staged_commits", "*"))
	for _, m := range append(matches, staged...) {
		rel := m[len(filepath.Dir(filepath.Dir(m)))+1:]
		if filepath.Base(filepath.Dir(m)) == "_staged_commits" {
			rel = "_delta_log/_staged_commits/" + filepath.Base(m)
		}
		p := parseLogPath(filepath.ToSlash(rel))
		for _, k := range kinds {
			if p.Kind == k {
				data, err := os.ReadFile(m)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, data)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no corpus files of kinds %v", kinds)
	}
	return out
}

// FuzzParseActions: the commit-line parser never panics and either
// succeeds or reports a line wrapping ErrCorrupt.
func FuzzParseActions(f *testing.F) {
	for _, data := range corpusFiles(f, kindCommit, kindCompaction, kindStagedCommit) {
		f.Add(data)
	}
	f.Add([]byte(`{"protocol":{"minReaderVersion":"x"}}`))
	f.Add([]byte("{\"metaData\":null}\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fa, err := parseActions(data)
		if err != nil {
			var le *lineError
			if !errors.As(err, &le) || le.Line < 1 || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not a line error wrapping ErrCorrupt", err)
			}
			return
		}
		if fa.protocol != nil && !json.Valid(fa.rawProtocol) {
			t.Fatalf("raw protocol %q is not JSON", fa.rawProtocol)
		}
		if fa.metadata != nil && (!json.Valid(fa.rawMetadata) || fa.metadata.Configuration == nil) {
			t.Fatalf("metadata not normalised or raw invalid")
		}
	})
}

// FuzzParseLastCheckpoint: the hint parser never panics and never
// returns a negative version.
func FuzzParseLastCheckpoint(f *testing.F) {
	for _, data := range corpusFiles(f, kindLastCheckpoint) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lc, ok := parseLastCheckpoint(data)
		if ok && (lc.Version < 0 || lc.Parts < 0) {
			t.Fatalf("parseLastCheckpoint(%q) = %+v", data, lc)
		}
		if !ok && lc != (lastCheckpoint{}) {
			t.Fatalf("not ok but %+v", lc)
		}
	})
}

// FuzzCheckpointRows: the checkpoint-row parser never panics on any bytes
// and reports failures as ErrCorrupt.
func FuzzCheckpointRows(f *testing.F) {
	for _, data := range corpusFiles(f, kindCheckpoint, kindMultiCheckpoint, kindV2Checkpoint) {
		if bytes.HasPrefix(data, []byte("PAR1")) {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fa, err := readParquetActions(bytes.NewReader(data), int64(len(data)), true)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if fa.protocol != nil && !json.Valid(fa.rawProtocol) {
			t.Fatalf("rebuilt protocol %q is not JSON", fa.rawProtocol)
		}
		if fa.metadata != nil && !json.Valid(fa.rawMetadata) {
			t.Fatalf("rebuilt metaData %q is not JSON", fa.rawMetadata)
		}
	})
}

// FuzzParseSchema: the schema parser never panics.
func FuzzParseSchema(f *testing.F) {
	f.Add(`{"type":"struct","fields":[{"name":"a","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"long","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}}]}`)
	f.Add(`{"type":"struct","fields":[]}`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseSchema(s)
		if err != nil {
			return
		}
		_ = st.String()
		if _, err := json.Marshal(st); err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
	})
}
