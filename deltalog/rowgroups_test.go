package deltalog

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// rangeRecorder records the byte ranges read through it.
type rangeRecorder struct {
	r      io.ReaderAt
	ranges [][2]int64
}

func (rr *rangeRecorder) ReadAt(p []byte, off int64) (int, error) {
	rr.ranges = append(rr.ranges, [2]int64{off, off + int64(len(p))})
	return rr.r.ReadAt(p, off)
}

// TestCheckpointProjection writes a checkpoint whose first row group holds
// only add actions and whose second holds protocol and metaData, then
// checks which bytes the reader touched: never an add column chunk, and
// never the (all-null) protocol/metaData chunks of the first row group,
// which statistics let it skip.
func TestCheckpointProjection(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[dmRow](&buf, parquet.MaxRowsPerRowGroup(50))
	var rows []dmRow
	for i := range 50 {
		rows = append(rows, dmRow{Add: &dmAdd{Path: fmt.Sprintf("part-%05d.parquet", i), Size: int64(i)}})
	}
	rows = append(rows,
		dmRow{Protocol: &dmProtocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		dmRow{MetaData: &dmMetadata{ID: "proj", Format: dmFormat{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`}},
	)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rec := &rangeRecorder{r: bytes.NewReader(data)}
	fa, err := readParquetActions(rec, int64(len(data)), false)
	if err != nil {
		t.Fatal(err)
	}
	if fa.protocol == nil || fa.metadata == nil || fa.metadata.ID != "proj" {
		t.Fatalf("actions not found: %+v", fa)
	}
	t.Logf("file %d bytes, reads %v", len(data), rec.ranges)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.Metadata().RowGroups); n != 2 {
		t.Fatalf("%d row groups, want 2", n)
	}
	for g, rg := range pf.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			path := strings.Join(md.PathInSchema, ".")
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			end := start + md.TotalCompressedSize
			skip := strings.HasPrefix(path, "add.") || g == 0
			if !skip {
				continue
			}
			for _, r := range rec.ranges {
				if r[0] < end && start < r[1] {
					t.Errorf("row group %d column %s [%d,%d) was read by [%d,%d)", g, path, start, end, r[0], r[1])
				}
			}
		}
	}
}
