package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/fileblob"
)

// layoutFiles is the add count of the layout tests: big enough for many
// pages per column chunk, small enough to generate in a second or two.
const layoutFiles = 60_000

// TestCheckpointLayouts loads tables whose checkpoint is laid out the way
// real writers lay it out and checks that Load returns the right protocol
// and metaData, never reads an add column chunk, and that reading costs
// what the protocol/metaData rows cost: a bounded number of checkpoint
// bytes and a bounded allocation, whatever the layout.
func TestCheckpointLayouts(t *testing.T) {
	layouts := []cpLayout{
		{nFiles: layoutFiles, pmAt: "first"},
		{nFiles: layoutFiles, pmAt: "middle"},
		{nFiles: layoutFiles, pmAt: "last"},
		// Many row groups whose footer has no null counts: row-group
		// statistics cannot skip the ones without protocol/metaData.
		{nFiles: layoutFiles, pmAt: "middle", rowGroup: 2_000, noStats: true},
		// ... nor a page index: every page of one key leaf per action is
		// decoded, but no values of null rows are built.
		{nFiles: layoutFiles, pmAt: "last", rowGroup: 2_000, noStats: true, noPageIndex: true},
		{nFiles: layoutFiles, pmAt: "middle", noPageIndex: true},
	}
	for _, l := range layouts {
		t.Run(l.name(), func(t *testing.T) {
			dir := layoutTableDir(t, l, 3)
			res := scaleLoad(t, dir)
			checkFixtureSnapshot(t, res.snap, 3)
			t.Logf("checkpoint: %d bytes in %d GETs; Load: %.2f MiB allocated", res.cpBytes, res.cpGets, float64(res.allocBytes)/(1<<20))
			// One GET for the footer block, at most a few more for the
			// page index and the protocol/metaData chunks; without
			// statistics or page index, one exact GET per row group.
			maxGets := 4
			if l.noStats && l.noPageIndex {
				maxGets = l.nFiles/int(l.rowGroup) + 3
			}
			if res.cpGets > maxGets {
				t.Errorf("%d GETs of the checkpoint, want at most %d", res.cpGets, maxGets)
			}
			if res.cpBytes > 1<<20 {
				t.Errorf("read %d bytes of the checkpoint, want at most 1 MiB", res.cpBytes)
			}
			if res.allocBytes > 4<<20 {
				t.Errorf("Load allocated %.1f MiB, want at most 4 MiB", float64(res.allocBytes)/(1<<20))
			}
			checkNoAddChunkRead(t, filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint)))
		})
	}
}

// checkNoAddChunkRead reads the checkpoint at path with readParquetActions
// and fails if any byte of an add or remove column chunk was read.
func checkNoAddChunkRead(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := &rangeRecorder{r: bytes.NewReader(data)}
	fa, err := readParquetActions(rec, int64(len(data)), false)
	if err != nil {
		t.Fatal(err)
	}
	if fa.protocol == nil || fa.metadata == nil {
		t.Fatalf("protocol or metaData not found: %+v", fa)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true))
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, r := range rec.ranges {
		read += r[1] - r[0]
	}
	for g, rg := range pf.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			path := strings.Join(md.PathInSchema, ".")
			if !strings.HasPrefix(path, "add.") && !strings.HasPrefix(path, "remove.") {
				continue
			}
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			end := start + md.TotalCompressedSize
			for _, r := range rec.ranges {
				if r[0] < end && start < r[1] {
					t.Fatalf("row group %d column %s [%d,%d) was read by [%d,%d)", g, path, start, end, r[0], r[1])
				}
			}
		}
	}
	t.Logf("readParquetActions read %d of %d bytes in %d reads", read, len(data), len(rec.ranges))
}

// v2Row is a row of a v2 checkpoint's top-level Parquet file.
type v2Row struct {
	CheckpointMetadata *v2CheckpointMetadata `parquet:"checkpointMetadata,optional"`
	Sidecar            *v2Sidecar            `parquet:"sidecar,optional"`
	MetaData           *cpMetaData           `parquet:"metaData,optional"`
	Protocol           *cpProtocol           `parquet:"protocol,optional"`
}

type v2CheckpointMetadata struct {
	Version *int64 `parquet:"version,optional"`
}

type v2Sidecar struct {
	Path             *string `parquet:"path,optional"`
	SizeInBytes      *int64  `parquet:"sizeInBytes,optional"`
	ModificationTime *int64  `parquet:"modificationTime,optional"`
}

// writeParquetRows writes rows to path with parquet-go's default options.
func writeParquetRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// addRows returns add rows for files [from, to).
func addRows(from, to int) []cpRow {
	rows := make([]cpRow, 0, to-from)
	for i := from; i < to; i++ {
		rows = append(rows, addRow(i))
	}
	return rows
}

// loadCounted loads the table in dir and returns the snapshot and the keys read.
func loadCounted(t *testing.T, dir string) (*Snapshot, []string) {
	t.Helper()
	fb, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	b, c := newCountingBucket(fb)
	snap, err := NewTable(b, "layout").Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, keys := c.counts()
	return snap, keys
}

// TestMultiPartCheckpointLayout: a classic checkpoint in three parts, adds
// in every part and protocol/metaData in the middle of the second, each
// part one row group.
func TestMultiPartCheckpointLayout(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const per = 20_000
	for part := 1; part <= 3; part++ {
		rows := addRows((part-1)*per, part*per)
		if part == 2 {
			rows = append(rows[:per/2], append(pmRows(), rows[per/2:]...)...)
		}
		name := fmt.Sprintf("%020d.checkpoint.%010d.%010d.parquet", fixtureCheckpoint, part, 3)
		writeParquetRows(t, filepath.Join(logDir, name), rows)
	}
	if err := writeCommitsAfter(logDir, fixtureCheckpoint, 3, 3*per); err != nil {
		t.Fatal(err)
	}
	snap, keys := loadCounted(t, dir)
	checkFixtureSnapshot(t, snap, 3)
	for part := 1; part <= 3; part++ {
		name := fmt.Sprintf("%020d.checkpoint.%010d.%010d.parquet", fixtureCheckpoint, part, 3)
		checkPart := filepath.Join(logDir, name)
		data, err := os.ReadFile(checkPart)
		if err != nil {
			t.Fatal(err)
		}
		rec := &rangeRecorder{r: bytes.NewReader(data)}
		fa, err := readParquetActions(rec, int64(len(data)), false)
		if err != nil {
			t.Fatal(err)
		}
		if (part == 2) != (fa.protocol != nil && fa.metadata != nil) {
			t.Errorf("part %d: protocol %v metaData %v", part, fa.protocol != nil, fa.metadata != nil)
		}
	}
	if !containsKey(keys, "checkpoint.0000000002.0000000003.parquet") {
		t.Errorf("part 2 not read: %v", keys)
	}
}

// TestV2CheckpointSidecarsNeverOpened: v2 checkpoints, Parquet and JSON,
// whose adds all live in sidecar files: Load takes protocol and metaData
// from the top-level file and never opens a sidecar.
func TestV2CheckpointSidecarsNeverOpened(t *testing.T) {
	for _, kind := range []string{"parquet", "json"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			logDir := filepath.Join(dir, "_delta_log")
			sideDir := filepath.Join(logDir, "_sidecars")
			if err := os.MkdirAll(sideDir, 0o755); err != nil {
				t.Fatal(err)
			}
			const per = 10_000
			var sidecars []*v2Sidecar
			for s := range 3 {
				name := fmt.Sprintf("%016x-0000-4000-8000-%012x.parquet", s+1, s+1)
				writeParquetRows(t, filepath.Join(sideDir, name), addRows(s*per, (s+1)*per))
				fi, err := os.Stat(filepath.Join(sideDir, name))
				if err != nil {
					t.Fatal(err)
				}
				sidecars = append(sidecars, &v2Sidecar{Path: ptr(name), SizeInBytes: ptr(fi.Size()), ModificationTime: ptr(fixtureCreated)})
			}
			pm := pmRows()
			top := fmt.Sprintf("%020d.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.%s", fixtureCheckpoint, kind)
			if kind == "parquet" {
				rows := []v2Row{{CheckpointMetadata: &v2CheckpointMetadata{Version: ptr(int64(fixtureCheckpoint))}}}
				for _, s := range sidecars[:2] {
					rows = append(rows, v2Row{Sidecar: s})
				}
				rows = append(rows, v2Row{Protocol: pm[0].Protocol}, v2Row{MetaData: pm[1].MetaData}, v2Row{Sidecar: sidecars[2]})
				writeParquetRows(t, filepath.Join(logDir, top), rows)
			} else {
				lines := []any{
					map[string]any{"checkpointMetadata": map[string]any{"version": fixtureCheckpoint}},
					map[string]any{"sidecar": map[string]any{"path": *sidecars[0].Path, "sizeInBytes": *sidecars[0].SizeInBytes, "modificationTime": fixtureCreated}},
					map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
						"readerFeatures": fixtureReaderFeatures, "writerFeatures": fixtureWriterFeatures}},
					map[string]any{"metaData": fixtureMetadataJSON(false)},
				}
				for _, s := range sidecars[1:] {
					lines = append(lines, map[string]any{"sidecar": map[string]any{"path": *s.Path, "sizeInBytes": *s.SizeInBytes, "modificationTime": fixtureCreated}})
				}
				if err := writeJSONLines(filepath.Join(logDir, top), lines); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeCommitsAfter(logDir, fixtureCheckpoint, 3, 3*per); err != nil {
				t.Fatal(err)
			}
			lc, _ := json.Marshal(map[string]any{"version": fixtureCheckpoint, "size": 6})
			if err := os.WriteFile(filepath.Join(logDir, "_last_checkpoint"), lc, 0o644); err != nil {
				t.Fatal(err)
			}
			snap, keys := loadCounted(t, dir)
			checkFixtureSnapshot(t, snap, 3)
			if !containsKey(keys, top) {
				t.Errorf("top-level checkpoint %s not read: %v", top, keys)
			}
			if containsKey(keys, "_sidecars/") {
				t.Errorf("a sidecar was opened: %v", keys)
			}
		})
	}
}

func containsKey(keys []string, sub string) bool {
	for _, k := range keys {
		if strings.Contains(k, sub) {
			return true
		}
	}
	return false
}

// TestCheckpointReadLeavesTheHead: reading a big checkpoint through the
// block reader a Load uses never fetches the file's first block for the
// 4-byte head magic (a request of its own, one more round trip before
// protocol and metaData), and the parquet-go layout with protocol and
// metaData first takes one request (the tail block, which holds the
// footer, the page index and, in that layout, their chunks' pages read),
// the Spark layout at most two.
func TestCheckpointReadLeavesTheHead(t *testing.T) {
	for _, tc := range []struct {
		l       cpLayout
		maxGets int
	}{{cpLayout{nFiles: layoutFiles, pmAt: "first"}, 2}, {cpLayout{nFiles: layoutFiles, writer: "spark"}, 2}} {
		t.Run(tc.l.name(), func(t *testing.T) {
			dir := layoutTableDir(t, tc.l, 3)
			data, err := os.ReadFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint)))
			if err != nil {
				t.Fatal(err)
			}
			size := int64(len(data))
			if size <= checkpointWholeSize {
				t.Fatalf("checkpoint of %d bytes: too small for block reads", size)
			}
			rec := &rangeRecorder{r: bytes.NewReader(data)}
			br := newBlockReaderAt(rec, size, checkpointBlock(size))
			fa, err := readCheckpoint(br, size, false, nil)
			br.release()
			if err != nil || fa.protocol == nil || fa.metadata == nil {
				t.Fatalf("readCheckpoint = %+v, %v", fa, err)
			}
			for _, r := range rec.ranges {
				if r[0] < 4 {
					t.Errorf("read [%d, %d): the head of the file", r[0], r[1])
				}
			}
			if len(rec.ranges) > tc.maxGets {
				t.Errorf("%d requests %v, want at most %d", len(rec.ranges), rec.ranges, tc.maxGets)
			}
		})
	}
}
