package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deltasync/deltasync/internal/hostile"
	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
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

// fuzzCheckpoints are the base checkpoints the structured checkpoint fuzz
// targets patch: snappy (parquet-go's default) and gzip.
func fuzzCheckpoints(f *testing.F) [2][]byte {
	var out [2][]byte
	for i, gz := range []bool{false, true} {
		cp, err := hostile.Checkpoint(gz)
		if err != nil {
			f.Fatal(err)
		}
		out[i] = cp
	}
	return out
}

// checkBoundedRead reads a checkpoint and fails unless it succeeds or
// fails with ErrCorrupt, allocating at most 256 MiB (well under what any
// of the sizes a fuzzed header or footer can claim would cost).
func checkBoundedRead(t *testing.T, data []byte) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fa, err := readCheckpoint(bytes.NewReader(data), int64(len(data)), true, newBudget(0))
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Fatalf("reading a %d-byte checkpoint allocated %d bytes", len(data), alloc)
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	if fa.metadata != nil {
		if err := checkMetadataText(fa.metadata); err != nil {
			t.Fatalf("accepted metaData: %v", err)
		}
	}
}

// FuzzCheckpointFooter: a checkpoint whose footer lies about one column
// chunk's offsets, sizes, counts or indexes (or the row counts) is read or
// refused as ErrCorrupt, never panics, and allocates boundedly.
func FuzzCheckpointFooter(f *testing.F) {
	cps := fuzzCheckpoints(f)
	for field := range uint8(10) {
		f.Add(false, uint8(20), field, int64(1)<<40)
		f.Add(true, uint8(22), field, int64(-1))
		f.Add(false, uint8(30), field, int64(3))
	}
	f.Fuzz(func(t *testing.T, gz bool, col, field uint8, v int64) {
		data := cps[0]
		if gz {
			data = cps[1]
		}
		out, err := hostile.RewriteFooter(data, func(md *format.FileMetaData) {
			if len(md.RowGroups) == 0 || len(md.RowGroups[0].Columns) == 0 {
				return
			}
			rg := &md.RowGroups[0]
			cc := &rg.Columns[int(col)%len(rg.Columns)]
			switch field % 10 {
			case 0:
				cc.MetaData.DataPageOffset = v
			case 1:
				cc.MetaData.DictionaryPageOffset = v
			case 2:
				cc.MetaData.TotalCompressedSize = v
			case 3:
				cc.MetaData.NumValues = v
			case 4:
				cc.OffsetIndexOffset = v
			case 5:
				cc.OffsetIndexLength = int32(v)
			case 6:
				cc.ColumnIndexOffset = v
			case 7:
				cc.ColumnIndexLength = int32(v)
			case 8:
				rg.NumRows = v
			case 9:
				md.NumRows = v
			}
		})
		if err != nil {
			t.Skip()
		}
		checkBoundedRead(t, out)
	})
}

// FuzzCheckpointPageHeader: a checkpoint whose metaData.schemaString page
// has a fuzzed header (type, sizes, value count) and body is read or
// refused as ErrCorrupt, never panics, and never allocates from what the
// header claims.
func FuzzCheckpointPageHeader(f *testing.F) {
	cps := fuzzCheckpoints(f)
	f.Add(false, int32(3), int32(1<<31-1), int32(23), []byte{})
	f.Add(true, int32(0), int32(100), int32(23), []byte("\x1f\x8b\x08\x00"))
	f.Add(true, int32(8), int32(64<<20), int32(1<<30), []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, gz bool, typ, uncompressed, values int32, body []byte) {
		data := cps[0]
		if gz {
			data = cps[1]
		}
		out, err := hostile.PatchFirstPage(data, []string{"metaData", "schemaString"}, func(h *format.PageHeader, old []byte) []byte {
			h.Type = format.PageType(typ % 8)
			h.UncompressedPageSize = uncompressed
			if h.DataPageHeader.Valid {
				h.DataPageHeader.V.NumValues = values
			}
			if h.DataPageHeaderV2.Valid {
				h.DataPageHeaderV2.V.NumValues = values
			}
			if len(body) == 0 {
				return old
			}
			return body
		})
		if err != nil {
			t.Skip()
		}
		checkBoundedRead(t, out)
	})
}

// FuzzThriftCheck: the Thrift claim walker and the page-header parser
// never panic, and what they accept is within the input; what parquet-go
// allocates decoding an accepted footer stays within the walker's alloc
// estimate (plus a per-byte allowance), the figure Loads charge to their
// budget.
func FuzzThriftCheck(f *testing.F) {
	for _, cp := range fuzzCheckpoints(f) {
		f.Add(cp[4:])
		f.Add(cp[len(cp)-200:])
	}
	f.Add([]byte{0x15, 0x02, 0x39, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07})
	// One row group listing 64Ki empty column chunks: 64 KiB of footer.
	dense := append([]byte{0x49, 0x1c, 0x19, 0xfc, 0x80, 0x80, 0x04}, make([]byte, 1<<16)...)
	f.Add(append(dense, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, alloc, err := checkThrift(b)
		if err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("checkThrift accepted %d bytes of %d", n, len(b))
		}
		if err == nil {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var md format.FileMetaData
			_ = thrift.Unmarshal(new(thrift.CompactProtocol), b[:n], &md)
			runtime.ReadMemStats(&after)
			if got, bound := int64(after.TotalAlloc-before.TotalAlloc), alloc+64*int64(n)+64<<10; got > bound {
				t.Fatalf("decoding %d accepted bytes allocated %d, over the estimate %d (+ allowance): %d", n, got, alloc, bound)
			}
		}
		if _, n, err := parsePageHeader(b); err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("parsePageHeader accepted %d bytes of %d", n, len(b))
		}
	})
}

// FuzzActionText: a kept action carrying fuzzed bytes in one of its
// strings (a schema field name, a configuration key or value, the
// description, a partition column, a domain's configuration), raw or as a
// JSON escape, is refused as ErrCorrupt unless the bytes are valid text,
// and nothing accepted holds invalid UTF-8 or a U+FFFD the input did not
// hold.
func FuzzActionText(f *testing.F) {
	f.Add(uint8(0), []byte("a\xff\xfeb"))
	f.Add(uint8(1), []byte(`\ud800`))
	f.Add(uint8(2), []byte("caf\xc3"))
	f.Add(uint8(3), []byte("ok"))
	f.Add(uint8(5), []byte(`\\udc00`))
	f.Fuzz(func(t *testing.T, where uint8, s []byte) {
		if bytes.ContainsAny(s, "\"\n\r") {
			t.Skip() // would end the string or the line
		}
		var line string
		schema := func(name []byte) string {
			return `{\"type\":\"struct\",\"fields\":[{\"name\":\"` + string(name) + `\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}`
		}
		md := func(desc, part, key, val, name []byte) string {
			return `{"metaData":{"id":"x","description":"` + string(desc) + `","format":{"provider":"parquet","options":{}},"schemaString":"` +
				schema(name) + `","partitionColumns":["` + string(part) + `"],"configuration":{"` + string(key) + `":"` + string(val) + `"},"createdTime":1}}`
		}
		ok := []byte("ok")
		switch where % 6 {
		case 0:
			line = md(ok, ok, ok, ok, s)
		case 1:
			line = md(s, ok, ok, ok, ok)
		case 2:
			line = md(ok, s, ok, ok, ok)
		case 3:
			line = md(ok, ok, s, ok, ok)
		case 4:
			line = md(ok, ok, ok, s, ok)
		case 5:
			line = `{"domainMetadata":{"domain":"d","configuration":"` + string(s) + `","removed":false}}`
		}
		fa, err := parseLines([]byte(line), false)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if !utf8.Valid(s) {
			t.Fatalf("accepted invalid UTF-8 %q", s)
		}
		hadFFFD := bytes.Contains(s, []byte("\ufffd")) || bytes.Contains(bytes.ToLower(s), []byte(`\ufffd`))
		var strs []string
		if m := fa.metadata; m != nil {
			strs = append(strs, m.Description, m.SchemaString)
			strs = append(strs, m.PartitionColumns...)
			for k, v := range m.Configuration {
				strs = append(strs, k, v)
			}
			if st, err := ParseSchema(m.SchemaString); err == nil {
				for _, fl := range st.Fields {
					strs = append(strs, fl.Name)
				}
			}
		}
		for _, d := range fa.domains {
			strs = append(strs, d.Domain, d.Configuration)
		}
		for _, x := range strs {
			if !utf8.ValidString(x) || (!hadFFFD && strings.ContainsRune(x, utf8.RuneError)) {
				t.Fatalf("accepted %q from input %q", x, s)
			}
		}
	})
}
