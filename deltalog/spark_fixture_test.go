package deltalog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The layout Spark writes at 1M files (issue #26, "Also, on the reader"):
// measured with pyspark 4.2 + delta-spark 4.4.0 on a 1M-file table, the
// checkpoint is written by parquet-mr, 220 MB, in two row groups of
// 599,607 and 400,396 rows (parquet-mr closes a row group when its
// buffered size reaches parquet.block.size, 128 MB), protocol and
// metaData in the second. parquet-mr also cuts pages at 20,000 rows
// (parquet.page.row.count.limit) or 1 MiB, writes v1 data pages,
// statistics with null counts and a page index. The fixture here is
// parquet-go made to lay a checkpoint out the same way, so that the
// benchmarks cover that layout without Spark: the same row-group split
// (in proportion below 1M files), protocol and metaData at the row Spark
// put them (839,937 and 839,938 of a real 1M checkpoint; in the middle
// of the second row group), 20,000-row pages, v1 pages, parquet-mr's
// created_by, and the add columns Spark 4 writes (deletion vector, row
// tracking, clustering, stats as JSON and as a struct), in shuffled
// order as Spark's state is, which bring the file to ~175 MB at 1M
// files (the measured one: 220 MB).

// sparkLayoutRev names the Spark-layout generator's version in fixture directories.
const sparkLayoutRev = "s1"

const (
	sparkRows1M      = 1_000_003 // rows of the measured 1M checkpoint: 1M adds, protocol, metaData, a txn
	sparkFirstGroup  = 599_607   // rows of its first row group
	sparkPMRow1M     = 839_937   // the protocol row of a 1M Spark checkpoint; metaData follows it
	sparkPageRows    = 20_000    // parquet-mr's parquet.page.row.count.limit
	sparkPageBytes   = 1 << 20   // parquet-mr's parquet.page.size
	sparkLayoutFiles = 1_000_000 // the benchmark fixture
)

// sparkCreatedBy is a created_by in parquet-mr's shape ("parquet-mr
// version X.Y.Z (build <40 hex>)"); the build id is not a real one.
const sparkCreatedBy = "parquet-mr version 1.17.0 (build 5c1d9a3e0f6b7d2c8a4e1f0b9d3c7a6e5f4b2d10)"

// sparkCreatedByShape is what parquet-mr writes as created_by.
var sparkCreatedByShape = regexp.MustCompile(`^parquet-mr version \d+\.\d+\.\d+ \(build [0-9a-f]{40}\)$`)

// sparkShape is where a Spark checkpoint of rows rows puts its row-group
// boundary and its protocol row (metaData is the next one): in the
// proportions of the measured 1M checkpoint, exactly its rows at 1M files.
func sparkShape(rows int) (firstGroup, pmRow int) {
	return int(int64(rows) * sparkFirstGroup / sparkRows1M), int(int64(rows) * sparkPMRow1M / sparkRows1M)
}

// sparkRow is a checkpoint row with the columns Spark 4 writes.
type sparkRow struct {
	Txn      *cpTxn      `parquet:"txn,optional"`
	Add      *sparkAdd   `parquet:"add,optional"`
	Remove   *cpRemove   `parquet:"remove,optional"`
	MetaData *cpMetaData `parquet:"metaData,optional"`
	Protocol *cpProtocol `parquet:"protocol,optional"`
}

type sparkAdd struct {
	Path                    *string           `parquet:"path,optional"`
	PartitionValues         map[string]string `parquet:"partitionValues,optional"`
	Size                    *int64            `parquet:"size,optional"`
	ModificationTime        *int64            `parquet:"modificationTime,optional"`
	DataChange              *bool             `parquet:"dataChange,optional"`
	Tags                    map[string]string `parquet:"tags,optional"`
	DeletionVector          *sparkDV          `parquet:"deletionVector,optional"`
	BaseRowID               *int64            `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64            `parquet:"defaultRowCommitVersion,optional"`
	ClusteringProvider      *string           `parquet:"clusteringProvider,optional"`
	Stats                   *string           `parquet:"stats,optional"`
	PartitionValuesParsed   *sparkPartition   `parquet:"partitionValues_parsed,optional"`
	StatsParsed             *sparkStatsStruct `parquet:"stats_parsed,optional"`
}

type sparkDV struct {
	StorageType    *string `parquet:"storageType,optional"`
	PathOrInlineDv *string `parquet:"pathOrInlineDv,optional"`
	Offset         *int32  `parquet:"offset,optional"`
	SizeInBytes    *int32  `parquet:"sizeInBytes,optional"`
	Cardinality    *int64  `parquet:"cardinality,optional"`
}

type sparkPartition struct {
	Day *string `parquet:"day,optional"`
}

type sparkStatsStruct struct {
	NumRecords  *int64            `parquet:"numRecords,optional"`
	MinValues   *sparkStatsValues `parquet:"minValues,optional"`
	MaxValues   *sparkStatsValues `parquet:"maxValues,optional"`
	NullCount   *sparkNullCounts  `parquet:"nullCount,optional"`
	TightBounds *bool             `parquet:"tightBounds,optional"`
}

type sparkStatsValues struct {
	ID       *int64  `parquet:"id,optional"`
	Ts       *int64  `parquet:"ts,optional"`
	Customer *string `parquet:"customer,optional"`
	Amount   *int64  `parquet:"amount,optional"`
}

type sparkNullCounts struct {
	ID       *int64 `parquet:"id,optional"`
	Ts       *int64 `parquet:"ts,optional"`
	Customer *int64 `parquet:"customer,optional"`
	Amount   *int64 `parquet:"amount,optional"`
	Tags     *int64 `parquet:"tags,optional"`
}

// sparkAddRow is the i-th add of a Spark-layout fixture: fixtureAdd's file
// with the stats also as a struct, as Spark writes them, the
// insertion-time tags Delta writers put on a file, and a deletion vector
// on every other file.
func sparkAddRow(i int) sparkRow {
	path, part, size, mtime, stats := fixtureAdd(i)
	rows := int64(500000 + i%100000)
	day := part["day"]
	ts := fixtureCreated + int64(i%365)*86_400_000
	insert := strconv.FormatInt(mtime*1000, 10) // µs, as the insertion-time tags are written
	tags := map[string]string{"INSERTION_TIME": insert, "MIN_INSERTION_TIME": insert, "MAX_INSERTION_TIME": insert,
		"OPTIMIZE_TARGET_SIZE": "268435456"}
	var dv *sparkDV
	if i%2 == 1 { // deletion vectors are on (fixtureConfig): half the files have rows deleted
		dv = &sparkDV{StorageType: ptr("u"), PathOrInlineDv: ptr(fmt.Sprintf("ab^-aqEH.-t@S}K{%04x%08x", i%65536, uint32(i*2654435761))),
			Offset: ptr(int32(1 + i%4000)), SizeInBytes: ptr(int32(34 + i%200)), Cardinality: ptr(int64(1 + i%5000))}
	}
	return sparkRow{Add: &sparkAdd{Path: ptr(path), PartitionValues: part, Size: ptr(size), DeletionVector: dv,
		ModificationTime: ptr(mtime), DataChange: ptr(false), Stats: ptr(stats), Tags: tags,
		PartitionValuesParsed: &sparkPartition{Day: ptr(day)},
		StatsParsed: &sparkStatsStruct{NumRecords: ptr(rows),
			MinValues:   &sparkStatsValues{ID: ptr(int64(i) * 1_000_000), Ts: ptr(ts), Customer: ptr(fmt.Sprintf("aaron-%05d", i%99999)), Amount: ptr(int64(1))},
			MaxValues:   &sparkStatsValues{ID: ptr(int64(i)*1_000_000 + rows), Ts: ptr(ts + 86_399_999), Customer: ptr(fmt.Sprintf("zoe-%05d", i%99999)), Amount: ptr(int64(9_999_999))},
			NullCount:   &sparkNullCounts{ID: ptr(int64(0)), Ts: ptr(int64(i % 7)), Customer: ptr(int64(i % 13)), Amount: ptr(int64(0)), Tags: ptr(rows / 2)},
			TightBounds: ptr(true)}}}
}

// sparkOrder is the file at position k of n in a Spark checkpoint: Spark
// writes the state in the order of its shuffle, not of the commits, so
// neighbouring rows do not share path prefixes or partition values. A
// fixed odd stride coprime with n makes a deterministic permutation.
func sparkOrder(k, n int) int {
	const stride = 2_654_435_761 // Knuth's multiplicative hash constant, a prime
	if n%stride == 0 {
		return k
	}
	return int(uint64(k) * stride % uint64(n))
}

// sparkCreatedByOption sets created_by verbatim (parquet.CreatedBy formats
// "(build" without parquet-mr's space).
type sparkCreatedByOption string

func (o sparkCreatedByOption) ConfigureWriter(c *parquet.WriterConfig) { c.CreatedBy = string(o) }

// writeSparkCheckpointFile writes a classic checkpoint of nFiles adds laid
// out as Spark lays out a 1M-file one (see the top of this file) to path.
func writeSparkCheckpointFile(path string, nFiles int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := parquet.NewGenericWriter[sparkRow](f,
		parquet.Compression(&parquet.Snappy),
		parquet.DataPageVersion(1),
		parquet.PageBufferSize(sparkPageBytes),
		sparkCreatedByOption(sparkCreatedBy),
	)
	rows := nFiles + 3
	firstGroup, pmRow := sparkShape(rows)
	pm := pmRows()
	txn := sparkRow{Txn: &cpTxn{AppID: ptr("streaming-ingest"), Version: ptr(int64(fixtureCheckpoint)), LastUpdated: ptr(fixtureCreated)}}
	// Rows are written in batches that end at every page boundary (each
	// 20,000 rows of a row group) and at the row-group boundary, where
	// every column's page is cut or the row group flushed.
	batch := make([]sparkRow, 0, 4096)
	inGroup, add := 0, 0
	for r := 0; r < rows; r++ {
		switch r - pmRow {
		case 0:
			batch = append(batch, sparkRow{Protocol: pm[0].Protocol})
		case 1:
			batch = append(batch, sparkRow{MetaData: pm[1].MetaData})
		case 2:
			batch = append(batch, txn)
		default:
			batch = append(batch, sparkAddRow(sparkOrder(add, nFiles)))
			add++
		}
		inGroup++
		groupEnd := r+1 == firstGroup
		pageEnd := inGroup%sparkPageRows == 0
		if len(batch) < cap(batch) && !groupEnd && !pageEnd && r+1 < rows {
			continue
		}
		if _, err := w.Write(batch); err != nil {
			return err
		}
		batch = batch[:0]
		switch {
		case groupEnd:
			if err := w.Flush(); err != nil {
				return err
			}
			inGroup = 0
		case pageEnd:
			for _, cw := range w.ColumnWriters() {
				if err := cw.Flush(); err != nil {
					return err
				}
			}
		}
	}
	if add != nFiles {
		return fmt.Errorf("wrote %d adds, want %d", add, nFiles)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// sparkLayoutFacts is what checkSparkLayout reads back from a checkpoint.
type sparkLayoutFacts struct {
	groupRows  []int64
	pmGroup    int   // row group of the protocol and metaData rows
	pmRow      int64 // the protocol row, counted from the file's first row
	maxPage    int64 // most rows of one page (offset index)
	createdBy  string
	fileBytes  int64
	dataPageV1 bool
}

// readSparkLayout reads the layout facts of the checkpoint at path: the
// footer, every page of the protocol.minReaderVersion and metaData.id
// leaves, and the offset indexes.
func readSparkLayout(tb testing.TB, path string) sparkLayoutFacts {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	f, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	facts := sparkLayoutFacts{createdBy: f.Metadata().CreatedBy, fileBytes: st.Size(), pmGroup: -1, pmRow: -1, dataPageV1: true}
	proto := child(f.Root().Column("protocol"), "minReaderVersion")
	meta := child(f.Root().Column("metaData"), "id")
	var base int64
	for g, rg := range f.RowGroups() {
		facts.groupRows = append(facts.groupRows, rg.NumRows())
		for _, cc := range f.Metadata().RowGroups[g].Columns {
			var ph format.PageHeader
			dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(io.NewSectionReader(fh, cc.MetaData.DataPageOffset, 1<<16)))
			if err := dec.Decode(&ph); err != nil {
				tb.Fatalf("%s: row group %d: page header of %v: %v", path, g, cc.MetaData.PathInSchema, err)
			}
			if ph.Type != format.DataPage {
				facts.dataPageV1 = false
			}
		}
		for _, chunk := range rg.ColumnChunks() {
			oi, err := chunk.OffsetIndex()
			if err != nil {
				tb.Fatalf("%s: row group %d: offset index: %v", path, g, err)
			}
			for p := range oi.NumPages() {
				end := rg.NumRows()
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				facts.maxPage = max(facts.maxPage, end-oi.FirstRowIndex(p))
			}
		}
		gd := &pageGuard{f: f, g: g}
		for _, leaf := range []*parquet.Column{proto, meta} {
			if err := gd.chunk(leaf); err != nil {
				tb.Fatal(err)
			}
			rows, err := findRows(gd, rg, leaf, 0)
			if err != nil {
				tb.Fatal(err)
			}
			if len(rows) == 0 {
				continue
			}
			if len(rows) != 1 {
				tb.Fatalf("%s: row group %d has %d %s rows", path, g, len(rows), leaf.Name())
			}
			if leaf == proto {
				facts.pmGroup, facts.pmRow = g, base+rows[0]
			} else if facts.pmRow < 0 || base+rows[0] != facts.pmRow+1 {
				tb.Fatalf("%s: metaData at row %d, protocol at %d: want metaData right after protocol", path, base+rows[0], facts.pmRow)
			}
		}
		base += rg.NumRows()
	}
	return facts
}

// checkSparkLayout fails unless the checkpoint at path, of nFiles adds,
// has the layout of a Spark checkpoint (see the top of this file).
func checkSparkLayout(tb testing.TB, path string, nFiles int) sparkLayoutFacts {
	tb.Helper()
	facts := readSparkLayout(tb, path)
	rows := nFiles + 3
	firstGroup, pmRow := sparkShape(rows)
	if len(facts.groupRows) != 2 || facts.groupRows[0] != int64(firstGroup) || facts.groupRows[1] != int64(rows-firstGroup) {
		tb.Errorf("%s: row groups of %v rows, want [%d %d]", path, facts.groupRows, firstGroup, rows-firstGroup)
	}
	if len(facts.groupRows) == 2 {
		ratio := float64(facts.groupRows[0]) / float64(facts.groupRows[0]+facts.groupRows[1])
		if want := float64(sparkFirstGroup) / sparkRows1M; ratio < want-0.001 || ratio > want+0.001 {
			tb.Errorf("%s: first row group holds %.4f of the rows, want %.4f", path, ratio, want)
		}
	}
	if facts.pmGroup != 1 || facts.pmRow != int64(pmRow) {
		tb.Errorf("%s: protocol in row group %d at row %d, want row group 1 at row %d", path, facts.pmGroup, facts.pmRow, pmRow)
	}
	if facts.maxPage > sparkPageRows {
		tb.Errorf("%s: a page of %d rows, want at most %d (parquet-mr's limit)", path, facts.maxPage, sparkPageRows)
	}
	if !sparkCreatedByShape.MatchString(facts.createdBy) {
		tb.Errorf("%s: created_by %q, want parquet-mr's shape %s", path, facts.createdBy, sparkCreatedByShape)
	}
	if !facts.dataPageV1 {
		tb.Errorf("%s: v2 data pages, want v1 (parquet-mr's default)", path)
	}
	return facts
}

// TestSparkLayoutFixture checks the Spark-layout generator at 60k files:
// two row groups split as Spark splits a 1M-file checkpoint, protocol and
// metaData where Spark put them, parquet-mr's pages and created_by, and a
// Load that finds them without reading an add column chunk. The 1M
// fixture itself is checked the same way by the benchmarks before timing.
func TestSparkLayoutFixture(t *testing.T) {
	if first, pm := sparkShape(sparkLayoutFiles + 3); first != sparkFirstGroup || pm != sparkPMRow1M {
		t.Fatalf("sparkShape(1M files) = %d, %d; want the measured %d, %d", first, pm, sparkFirstGroup, sparkPMRow1M)
	}
	l := cpLayout{nFiles: layoutFiles, writer: "spark"}
	dir := layoutTableDir(t, l, 3)
	cp := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint))
	facts := checkSparkLayout(t, cp, layoutFiles)
	t.Logf("%s: %d bytes, row groups %v, protocol at row %d, pages of at most %d rows", cp, facts.fileBytes, facts.groupRows, facts.pmRow, facts.maxPage)
	// The measured checkpoint has 220 bytes per add; these adds (fixtureAdd's
	// files, Spark's extra columns, shuffled) come to ~170-180. What the
	// reader's cost follows, the row groups and where protocol and metaData
	// sit, is exact; the size only has to be of that order.
	if per := float64(facts.fileBytes) / layoutFiles; per < 150 || per > 260 {
		t.Errorf("%.0f bytes per add, want 150-260 (the measured 1M checkpoint: 220)", per)
	}
	res := scaleLoad(t, dir)
	checkFixtureSnapshot(t, res.snap, 3)
	if res.cpGets > 4 || res.cpBytes > 1<<20 {
		t.Errorf("read %d bytes of the checkpoint in %d GETs, want at most 1 MiB in 4", res.cpBytes, res.cpGets)
	}
	checkNoAddChunkRead(t, cp)
	if strings.Contains(facts.createdBy, "parquet-go") {
		t.Errorf("created_by %q names parquet-go", facts.createdBy)
	}
}

// sparkLayoutTableDir returns the 1M-file Spark-layout table of the
// benchmarks, made on first use (about a minute) and checked each time.
func sparkLayoutTableDir(tb testing.TB) string {
	tb.Helper()
	dir := layoutTableDir(tb, cpLayout{nFiles: sparkLayoutFiles, writer: "spark"}, fixtureAfter)
	checkSparkLayout(tb, filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint)), sparkLayoutFiles)
	return dir
}
