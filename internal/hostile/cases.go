// Package hostile builds Delta logs that attack their reader (issue 21):
// checkpoints whose footers lie about where their chunks are or how many
// values their pages hold, decompression bombs, strings that are not
// UTF-8, commits and hints far bigger than what is kept of them. Each Case
// is a whole small table with the outcome a reader must reach and the
// bound it must stay under, so deltalog's tests and the daemon's
// isolation tests run the same inputs. It imports nothing from the
// project.
package hostile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Outcomes a Case expects from a Load.
const (
	Corrupt = "corrupt" // ErrCorrupt, naming File
	Budget  = "budget"  // ErrBudgetExceeded, naming File
	Loads   = "loads"   // a snapshot, within the bounds
)

// Table is a Delta log as files: key under the table root -> content.
type Table map[string][]byte

// Case is one hostile table.
type Case struct {
	Name  string
	Input string // what is hostile, in words
	Bound string // the bound that holds, in words
	Want  string // Corrupt, Budget or Loads
	File  string // the key of the file a Corrupt or Budget error names
	// MaxLoadBytes is the Load's memory budget (0: the default).
	MaxLoadBytes int64
	// MaxAlloc, when set, bounds the bytes one Load may allocate (Go's
	// TotalAlloc grows by less): a deterministic heap bound.
	MaxAlloc int64
	// Build makes the table; big ones are only built when run.
	Build func() (Table, error)
}

// CheckpointKey is the checkpoint of the checkpoint cases (version 1).
const CheckpointKey = "_delta_log/00000000000000000001.checkpoint.parquet"

// CommitKey is the commit of the commit cases (version 0).
const CommitKey = "_delta_log/00000000000000000000.json"

const (
	mib = 1 << 20
	gib = 1 << 30
)

// Cases returns every case; short scales the big inputs down (the bounds
// still fail for an unbounded reader).
func Cases(short bool) []Case {
	bombBytes, commitBytes, hintBytes := int64(gib), int64(100*mib), int64(200*mib)
	if short {
		bombBytes, commitBytes, hintBytes = 128*mib, 16*mib, 16*mib
	}
	var cs []Case
	cs = append(cs, chunkCases()...)
	cs = append(cs, bombCases(bombBytes)...)
	cs = append(cs, textCases()...)
	cs = append(cs, sizeCases(commitBytes, hintBytes)...)
	return cs
}

// cpTable is a table whose only files are a checkpoint at version 1 and
// its commit (commitInfo only).
func cpTable(cp []byte) Table {
	return Table{
		CheckpointKey:                          cp,
		"_delta_log/00000000000000000001.json": []byte(`{"commitInfo":{"timestamp":1700000001000,"operation":"WRITE"}}` + "\n"),
	}
}

// baseCheckpoint is a small clustered checkpoint written with opts.
func baseCheckpoint(opts ...parquet.WriterOption) ([]byte, error) {
	return WriteCheckpoint(checkpointRows(Schema, nil, 20), opts...)
}

func chunkEdit(path []string, edit func(*format.ColumnChunk, int64)) func() (Table, error) {
	return func() (Table, error) {
		cp, err := baseCheckpoint()
		if err != nil {
			return nil, err
		}
		if cp, err = EditChunks(cp, path, edit); err != nil {
			return nil, err
		}
		return cpTable(cp), nil
	}
}

// PastEOF moves a column chunk past the end of a file of size bytes and
// drops its page index, as a truncated or badly copied file has it.
func PastEOF(cc *format.ColumnChunk, size int64) {
	cc.MetaData.DataPageOffset, cc.MetaData.DictionaryPageOffset = size+1000, 0
	cc.ColumnIndexOffset, cc.ColumnIndexLength, cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0, 0, 0
}

var (
	domainPath = []string{"domainMetadata", "domain"}
	idPath     = []string{"metaData", "id"}
	schemaPath = []string{"metaData", "schemaString"}
)

// chunkCases: footers that lie about chunks (issue 21, item 3).
func chunkCases() []Case {
	c := func(name, input string, build func() (Table, error)) Case {
		return Case{Name: name, Input: input, Bound: "nothing read from the file is used", Want: Corrupt, File: CheckpointKey, Build: build}
	}
	return []Case{
		c("cp-domain-chunk-past-eof", "delta.clustering's domainMetadata.domain chunk starts past the end of the file (no page index)",
			chunkEdit(domainPath, PastEOF)),
		c("cp-domain-chunk-past-eof-indexed", "delta.clustering's domainMetadata.domain chunk starts past the end of the file (page index kept)",
			chunkEdit(domainPath, func(cc *format.ColumnChunk, size int64) { cc.MetaData.DataPageOffset = size + 1000 })),
		c("cp-every-chunk-past-eof", "every column chunk starts past the end of the file (no page index)",
			chunkEdit(nil, PastEOF)),
		c("cp-chunk-length-past-eof", "metaData.id chunk's length runs past the end of the file",
			chunkEdit(idPath, func(cc *format.ColumnChunk, size int64) { cc.MetaData.TotalCompressedSize = size })),
		c("cp-chunk-values-mismatch", "metaData.id chunk claims one value more than its pages hold",
			chunkEdit(idPath, func(cc *format.ColumnChunk, _ int64) { cc.MetaData.NumValues++ })),
		c("cp-offset-index-past-eof", "domainMetadata.domain's offset index lies past the end of the file",
			chunkEdit(domainPath, func(cc *format.ColumnChunk, size int64) { cc.OffsetIndexOffset = size + 10 })),
		c("cp-row-count-mismatch", "the footer claims one row more than its row groups hold",
			func() (Table, error) {
				cp, err := baseCheckpoint()
				if err != nil {
					return nil, err
				}
				cp, err = RewriteFooter(cp, func(md *format.FileMetaData) { md.NumRows++ })
				return cpTable(cp), err
			}),
		c("cp-offset-index-other-chunk", "domainMetadata.domain's offset index is metaData.id's (pages elsewhere)",
			func() (Table, error) {
				cp, err := baseCheckpoint()
				if err != nil {
					return nil, err
				}
				cp, err = RewriteFooter(cp, func(md *format.FileMetaData) {
					var from *format.ColumnChunk
					for i := range md.RowGroups[0].Columns {
						if cc := &md.RowGroups[0].Columns[i]; strings.Join(cc.MetaData.PathInSchema, ".") == "metaData.id" {
							from = cc
						}
					}
					for i := range md.RowGroups[0].Columns {
						if cc := &md.RowGroups[0].Columns[i]; strings.Join(cc.MetaData.PathInSchema, ".") == "domainMetadata.domain" && from != nil {
							cc.OffsetIndexOffset, cc.OffsetIndexLength = from.OffsetIndexOffset, from.OffsetIndexLength
						}
					}
				})
				return cpTable(cp), err
			}),
		c("cp-footer-list-bomb", "a footer whose row-group list claims 2^31-1 entries",
			func() (Table, error) {
				cp, err := baseCheckpoint()
				if err != nil {
					return nil, err
				}
				return cpTable(footerListBomb(cp)), nil
			}),
		{Name: "cp-footer-dense-bomb", Input: "a 4 MiB footer whose one row group lists 4Mi empty column chunks (one byte each, 560 once decoded)",
			Bound: "allocates < 64 MiB", Want: Budget, File: CheckpointKey, MaxAlloc: 64 * mib,
			Build: func() (Table, error) {
				cp, err := baseCheckpoint()
				if err != nil {
					return nil, err
				}
				return cpTable(footerDenseBomb(cp, 4*mib)), nil
			}},
	}
}

// footerListBomb replaces the footer of cp by a tiny one whose row_groups
// list (field 4) claims 2^31-1 elements.
func footerListBomb(cp []byte) []byte {
	_, start, err := footer(cp)
	if err != nil {
		return cp
	}
	// version (field 1, i32) = 1, then field 4 (delta 3, list) whose
	// header claims math.MaxInt32 structs (size 15: long form), then
	// nothing to back them.
	f := []byte{0x15, 0x02, 0x39, 0xfc}
	for v := uint64(math.MaxInt32); ; v >>= 7 {
		if v < 0x80 {
			f = append(f, byte(v))
			break
		}
		f = append(f, byte(v)|0x80)
	}
	f = append(f, 0, 0, 0, 0, 0, 0, 0, 0)
	out := append([]byte(nil), cp[:start]...)
	out = append(out, f...)
	out = append(out, byte(len(f)), byte(len(f)>>8), byte(len(f)>>16), byte(len(f)>>24))
	return append(out, "PAR1"...)
}

// footerDenseBomb replaces cp's footer by one whose row_groups list holds
// one row group listing n column chunks, each an empty struct: every claim
// is backed by bytes, so only what decoding allocates gives it away.
func footerDenseBomb(cp []byte, n int) []byte {
	_, start, err := footer(cp)
	if err != nil {
		return cp
	}
	// field 4 (row_groups, list of 1 struct), its field 1 (columns: a list
	// of structs, long-form size n), n stop bytes, then the two stops.
	f := []byte{0x49, 0x1c, 0x19, 0xfc}
	for v := uint64(n); ; v >>= 7 {
		if v < 0x80 {
			f = append(f, byte(v))
			break
		}
		f = append(f, byte(v)|0x80)
	}
	f = append(f, make([]byte, n+2)...)
	out := append([]byte(nil), cp[:start]...)
	out = append(out, f...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(f)))
	return append(out, "PAR1"...)
}

// gzipZeros returns a multi-member gzip stream inflating to n zero bytes
// (n a multiple of 1 MiB): ~1 KB per MiB.
func gzipZeros(n int64) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, mib))
	_ = zw.Close()
	out := make([]byte, 0, int(n/mib)*member.Len())
	for range n / mib {
		out = append(out, member.Bytes()...)
	}
	return out
}

// levels is the length of the uncompressed levels at the start of a v2
// data page (0 for a v1 page, compressed whole).
func levels(h *format.PageHeader) int {
	if !h.DataPageHeaderV2.Valid {
		return 0
	}
	return int(h.DataPageHeaderV2.V.RepetitionLevelsByteLength + h.DataPageHeaderV2.V.DefinitionLevelsByteLength)
}

// bombCases: pages that inflate past any bound (issue 21, item 5).
func bombCases(bomb int64) []Case {
	gz := func() ([]byte, error) { return baseCheckpoint(parquet.Compression(&parquet.Gzip)) }
	page := func(edit func(h *format.PageHeader, body []byte) []byte) func() (Table, error) {
		return func() (Table, error) {
			cp, err := gz()
			if err != nil {
				return nil, err
			}
			cp, err = PatchFirstPage(cp, schemaPath, edit)
			return cpTable(cp), err
		}
	}
	alloc := int64(64 * mib)
	return []Case{
		{Name: "cp-page-claims-2GiB", Input: "metaData.schemaString's gzip page header claims 2 GiB uncompressed",
			Bound: "allocates < 64 MiB", Want: Corrupt, File: CheckpointKey, MaxAlloc: alloc,
			Build: page(func(h *format.PageHeader, body []byte) []byte { h.UncompressedPageSize = math.MaxInt32; return body })},
		{Name: "cp-gzip-bomb", Input: fmt.Sprintf("a gzip page of %d KB inflating to %d MiB, its header saying so", len(gzipZeros(mib))*int(bomb/mib)/1000, bomb/mib),
			Bound: "allocates < 64 MiB", Want: Corrupt, File: CheckpointKey, MaxAlloc: alloc,
			Build: page(func(h *format.PageHeader, body []byte) []byte {
				lv := levels(h)
				h.UncompressedPageSize = int32(min(int64(lv)+bomb, math.MaxInt32))
				return append(body[:lv:lv], gzipZeros(bomb)...)
			})},
		{Name: "cp-gzip-bomb-lying-header", Input: fmt.Sprintf("a gzip page inflating to %d MiB whose header claims 100 bytes", bomb/mib),
			Bound: "allocates < 64 MiB", Want: Corrupt, File: CheckpointKey, MaxAlloc: alloc,
			Build: page(func(h *format.PageHeader, body []byte) []byte {
				lv := levels(h)
				h.UncompressedPageSize = int32(lv) + 100
				return append(body[:lv:lv], gzipZeros(bomb)...)
			})},
		{Name: "cp-page-claims-more-than-chunk", Input: "metaData.schemaString's page claims more compressed bytes than its chunk holds",
			Bound: "nothing read from the file is used", Want: Corrupt, File: CheckpointKey,
			Build: func() (Table, error) {
				cp, err := gz()
				if err != nil {
					return nil, err
				}
				cp, err = EditChunks(cp, schemaPath, func(cc *format.ColumnChunk, _ int64) { cc.MetaData.TotalCompressedSize -= 4 })
				return cpTable(cp), err
			}},
	}
}

// commit0 is a commit 0 creating a clustered table with metaData fields
// from md (raw JSON members after "id").
func commit0(mdExtra, schemaJSON string, tail string) []byte {
	return []byte(`{"commitInfo":{"timestamp":1700000000000,"operation":"CREATE TABLE"}}` + "\n" +
		`{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["domainMetadata","clustering"]}}` + "\n" +
		`{"metaData":{"id":"11111111-2222-3333-4444-555555555555","format":{"provider":"parquet","options":{}},"schemaString":` + schemaJSON +
		`,"partitionColumns":[],"configuration":{},"createdTime":1700000000000` + mdExtra + "}}\n" +
		`{"domainMetadata":{"domain":"delta.clustering","configuration":"{\"clusteringColumns\":[[\"a\"]]}","removed":false}}` + "\n" + tail)
}

// quoteSchema returns a schema as a JSON string literal, with raw bytes
// kept as they are (json.Marshal would replace invalid UTF-8).
func quoteSchema(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// textCases: strings that are not UTF-8 (issue 21, item 4).
func textCases() []Case {
	badSchema := strings.Replace(Schema, `"name":"a"`, "\"name\":\"a\xff\xfeb\"", 1)
	c := func(name, input string, data []byte) Case {
		return Case{Name: name, Input: input, Bound: "nothing read from the file is used", Want: Corrupt, File: CommitKey,
			Build: func() (Table, error) { return Table{CommitKey: data}, nil }}
	}
	cp := func(name, input, schema string, conf map[string]string) Case {
		return Case{Name: name, Input: input, Bound: "nothing read from the file is used", Want: Corrupt, File: CheckpointKey,
			Build: func() (Table, error) {
				data, err := WriteCheckpoint(checkpointRows(schema, conf, 3))
				return cpTable(data), err
			}}
	}
	return []Case{
		c("utf8-json-schema-field", "commit: schemaString field name \"a\\xff\\xfeb\"", commit0("", quoteSchema(badSchema), "")),
		c("utf8-json-config-key", "commit: a configuration key with byte \\xff", bytes.Replace(commit0("", quoteSchema(Schema), ""),
			[]byte(`"configuration":{}`), []byte("\"configuration\":{\"k\xffey\":\"v\"}"), 1)),
		c("utf8-json-description", "commit: description with a truncated UTF-8 sequence", commit0(",\"description\":\"caf\xc3\"", quoteSchema(Schema), "")),
		c("utf8-json-partition-column", "commit: partition column name with byte \\xfe", bytes.Replace(commit0("", quoteSchema(Schema), ""),
			[]byte(`"partitionColumns":[]`), []byte("\"partitionColumns\":[\"\xfe\"]"), 1)),
		c("utf8-json-lone-surrogate", "commit: description with an escaped lone surrogate \\ud800", commit0(`,"description":"x\ud800y"`, quoteSchema(Schema), "")),
		c("utf8-json-schema-lone-surrogate", "commit: schemaString field name with an escaped lone surrogate inside the schema JSON",
			commit0("", quoteSchema(strings.Replace(Schema, `"name":"a"`, `"name":"a\\udc00"`, 1)), "")),
		c("utf8-json-domain-config", "commit: delta.clustering configuration with byte \\xff", bytes.Replace(commit0("", quoteSchema(Schema), ""),
			[]byte(`[[\"a\"]]`), []byte("[[\\\"a\xff\\\"]]"), 1)),
		cp("utf8-cp-schema-field", "checkpoint: schemaString field name \"a\\xff\\xfeb\"", badSchema, nil),
		cp("utf8-cp-config-value", "checkpoint: a configuration value with byte \\xff", Schema, map[string]string{"delta.x": "v\xff"}),
	}
}

// sizeCases: files far bigger than what is kept of them (issue 21, item
// 7, and the per-Load budget).
func sizeCases(commitBytes, hintBytes int64) []Case {
	add := func(i int, statsLen int) string {
		return fmt.Sprintf(`{"add":{"path":"part-%07d.parquet","partitionValues":{},"size":1000,"modificationTime":1700000000000,"dataChange":true,"stats":"{\"numRecords\":1,\"pad\":\"%s\"}"}}`+"\n",
			i, strings.Repeat("x", statsLen))
	}
	return []Case{
		{Name: "commit-huge-of-adds", Input: fmt.Sprintf("a %d MiB commit of ~1 KB add lines", commitBytes/mib),
			Bound: "allocates < 4 MiB", Want: Loads, MaxAlloc: 4 * mib,
			Build: func() (Table, error) {
				var b bytes.Buffer
				b.Write(commit0("", quoteSchema(Schema), ""))
				for i := 0; int64(b.Len()) < commitBytes; i++ {
					b.WriteString(add(i, 800))
				}
				return Table{CommitKey: b.Bytes()}, nil
			}},
		{Name: "commit-one-huge-add-line", Input: "a commit whose one add line is 8 MiB (stats)",
			Bound: "allocates < 4 MiB", Want: Loads, MaxAlloc: 4 * mib,
			Build: func() (Table, error) {
				return Table{CommitKey: commit0("", quoteSchema(Schema), add(0, 8*mib))}, nil
			}},
		{Name: "commit-truncated-huge-add-line", Input: "a commit ending in a truncated 2 MiB add line",
			Bound: "nothing read from the file is used", Want: Corrupt, File: CommitKey,
			Build: func() (Table, error) {
				l := add(0, 2*mib)
				return Table{CommitKey: commit0("", quoteSchema(Schema), l[:len(l)-10])}, nil
			}},
		{Name: "last-checkpoint-huge", Input: fmt.Sprintf("a %d MiB _last_checkpoint", hintBytes/mib),
			Bound: "allocates < 4 MiB; the hint is ignored and the log listed", Want: Loads, MaxAlloc: 4 * mib,
			Build: func() (Table, error) {
				hint := append([]byte(`{"version":0,"size":4,"pad":"`), bytes.Repeat([]byte("x"), int(hintBytes))...)
				hint = append(hint, `"}`...)
				return Table{CommitKey: commit0("", quoteSchema(Schema), ""), "_delta_log/_last_checkpoint": hint}, nil
			}},
		{Name: "budget-metadata-line", Input: "a 3 MiB metaData line (description) loaded with MaxLoadBytes 1 MiB",
			Bound: "MaxLoadBytes = 1 MiB", Want: Budget, File: CommitKey, MaxLoadBytes: mib,
			Build: func() (Table, error) {
				return Table{CommitKey: commit0(`,"description":"`+strings.Repeat("d", 3*mib)+`"`, quoteSchema(Schema), "")}, nil
			}},
		{Name: "budget-checkpoint", Input: "a 2 MiB checkpoint loaded with MaxLoadBytes 256 KiB",
			Bound: "MaxLoadBytes = 256 KiB", Want: Budget, File: CheckpointKey, MaxLoadBytes: 256 << 10,
			Build: func() (Table, error) {
				rows := checkpointRows(Schema, nil, 0)
				for i := range 8000 {
					rows = append(rows, CheckpointRow{Add: &CheckpointAdd{Path: fmt.Sprintf("p-%07d-%s.parquet", i, strings.Repeat("y", 200)), Size: int64(i)}})
				}
				cp, err := WriteCheckpoint(rows)
				return cpTable(cp), err
			}},
	}
}
