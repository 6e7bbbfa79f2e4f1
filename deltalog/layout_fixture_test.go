package deltalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Checkpoint layouts as real writers lay them out (issue #9): protocol and
// metaData among the add rows of one big row group (first, last or in the
// middle), or spread over many row groups whose footer carries no
// statistics, with or without a page index. Written with parquet-go's
// default writer options (one row group unless rowGroup is set), which is
// also what a single-file Go writer produces.

// layoutRev names the generator version in cached fixture directories.
const layoutRev = "l1"

// cpLayout describes one checkpoint layout.
type cpLayout struct {
	nFiles      int
	pmAt        string // "first", "middle" or "last": where protocol and metaData sit among the adds
	rowGroup    int64  // rows per row group; 0: one row group
	noStats     bool   // footer without column-chunk statistics (no null counts)
	noPageIndex bool   // footer without column and offset indexes
	// writer "spark": Spark's layout at 1M files, scaled to nFiles
	// (spark_fixture_test.go); pmAt, rowGroup and the flags are unused.
	writer string
}

func (l cpLayout) name() string {
	if l.writer == "spark" {
		return fmt.Sprintf("n%d-spark-%s", l.nFiles, sparkLayoutRev)
	}
	s := fmt.Sprintf("n%d-pm%s-rg%d", l.nFiles, l.pmAt, l.rowGroup)
	if l.noStats {
		s += "-nostats"
	}
	if l.noPageIndex {
		s += "-nopageindex"
	}
	return s
}

// pmRows are the protocol and metaData rows of a layout fixture.
func pmRows() []cpRow {
	return []cpRow{
		{Protocol: &cpProtocol{MinReaderVersion: ptr(int32(3)), MinWriterVersion: ptr(int32(7)),
			ReaderFeatures: fixtureReaderFeatures, WriterFeatures: fixtureWriterFeatures}},
		{MetaData: &cpMetaData{ID: ptr(fixtureTableID), Name: ptr("orders"), Description: ptr("benchmark table"),
			Format: &cpFormat{Provider: ptr("parquet"), Options: map[string]string{}}, SchemaString: ptr(fixtureSchema),
			PartitionColumns: []string{"day"}, Configuration: fixtureConfig(false), CreatedTime: ptr(fixtureCreated)}},
	}
}

// addRow is the i-th add row of a layout fixture.
func addRow(i int) cpRow {
	path, part, size, mtime, stats := fixtureAdd(i)
	return cpRow{Add: &cpAdd{Path: ptr(path), PartitionValues: part, Size: ptr(size),
		ModificationTime: ptr(mtime), DataChange: ptr(false), Stats: ptr(stats)}}
}

// writeLayoutCheckpointFile writes a classic checkpoint with l's layout to path.
func writeLayoutCheckpointFile(path string, l cpLayout) error {
	if l.writer == "spark" {
		return writeSparkCheckpointFile(path, l.nFiles)
	}
	var buf bytes.Buffer
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy), parquet.CreatedBy("deltasync-layout", layoutRev, "")}
	if l.rowGroup > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(l.rowGroup))
	}
	w := parquet.NewGenericWriter[cpRow](&buf, opts...)
	pmIndex := map[string]int{"first": 0, "middle": l.nFiles / 2, "last": l.nFiles}[l.pmAt]
	batch := make([]cpRow, 0, 4096)
	flush := func() error {
		_, err := w.Write(batch)
		batch = batch[:0]
		return err
	}
	for i := 0; i <= l.nFiles; i++ {
		if i == pmIndex {
			batch = append(batch, pmRows()...)
		}
		if i == l.nFiles {
			break
		}
		batch = append(batch, addRow(i))
		if len(batch) >= 4096 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	data := buf.Bytes()
	if l.noStats || l.noPageIndex {
		var err error
		if data, err = rewriteFooter(data, func(md *format.FileMetaData) {
			for g := range md.RowGroups {
				for c := range md.RowGroups[g].Columns {
					cc := &md.RowGroups[g].Columns[c]
					if l.noStats {
						cc.MetaData.Statistics = format.Statistics{}
					}
					if l.noPageIndex {
						cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
						cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0
					}
				}
			}
		}); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}

// rewriteFooter decodes the footer of a Parquet file, lets edit change it
// and re-encodes it in place. Column chunks and indexes stay where they are.
func rewriteFooter(data []byte, edit func(*format.FileMetaData)) ([]byte, error) {
	n := len(data)
	if n < 12 || string(data[n-4:]) != "PAR1" {
		return nil, fmt.Errorf("not a parquet file")
	}
	flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	start := n - 8 - flen
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[start:n-8], &md); err != nil {
		return nil, err
	}
	edit(&md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), data[:start]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}

// layoutTableDir returns a Delta table whose latest checkpoint (version
// fixtureCheckpoint) has layout l, followed by `after` JSON commits (the
// 50th changes metaData when there are that many). Cached like fixtureDir.
func layoutTableDir(tb testing.TB, l cpLayout, after int) string {
	tb.Helper()
	return cachedFixtureDir(tb, fmt.Sprintf("layout-%s-a%d-%s", l.name(), after, layoutRev), func(tmp string) error {
		logDir := filepath.Join(tmp, "_delta_log")
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
		cp := filepath.Join(logDir, fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint))
		if err := writeLayoutCheckpointFile(cp, l); err != nil {
			return fmt.Errorf("write checkpoint %s: %w", cp, err)
		}
		if err := writeCommitsAfter(logDir, fixtureCheckpoint, after, l.nFiles); err != nil {
			return err
		}
		rows := l.nFiles + 2
		if l.writer == "spark" {
			rows++ // and a txn
		}
		lc, _ := json.Marshal(map[string]any{"version": fixtureCheckpoint, "size": rows, "numOfAddFiles": l.nFiles})
		return os.WriteFile(filepath.Join(logDir, "_last_checkpoint"), lc, 0o644)
	})
}

// writeCommitsAfter writes n JSON commits after version cp, each a
// commitInfo and fixtureAddsPerTxn adds; commit cp+50 changes metaData.
func writeCommitsAfter(logDir string, cp int64, n, nFiles int) error {
	for k := 1; k <= n; k++ {
		v := cp + int64(k)
		lines := []any{map[string]any{"commitInfo": map[string]any{
			"timestamp": fixtureCreated + v*60_000, "operation": "WRITE", "isBlindAppend": true}}}
		if k == 50 {
			lines = append(lines, map[string]any{"metaData": fixtureMetadataJSON(true)})
		}
		for j := 0; j < fixtureAddsPerTxn; j++ {
			path, part, size, mtime, stats := fixtureAdd(nFiles + k*fixtureAddsPerTxn + j)
			lines = append(lines, map[string]any{"add": map[string]any{"path": path, "partitionValues": part,
				"size": size, "modificationTime": mtime, "dataChange": true, "stats": stats}})
		}
		if err := writeJSONLines(filepath.Join(logDir, fmt.Sprintf("%020d.json", v)), lines); err != nil {
			return err
		}
	}
	return nil
}
