package deltalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// Benchmark fixtures: Delta tables shaped like a big production table, a
// classic Parquet checkpoint with N add actions (unique paths, per-file JSON
// stats, partition values) written with the Delta checkpoint schema (txn,
// add, remove, metaData, protocol), then 100 JSON commits after it, one of
// which changes metaData. Generated once into $DELTASYNC_CACHE/bench (or the
// OS temp dir) and reused; the directory name carries fixtureRev, so a change
// to the generator makes a new one.

const (
	fixtureRev        = "r1"
	fixtureCheckpoint = 1000 // checkpoint version
	fixtureBefore     = 100  // JSON commits kept before (and including) the checkpoint
	fixtureAfter      = 100  // JSON commits after the checkpoint
	fixtureMetaChange = fixtureCheckpoint + 50
	fixtureRowGroup   = 131072 // add rows per Parquet row group
	fixtureAddsPerTxn = 10     // add actions per JSON commit
)

// fixtureLatest is the latest version of a fixture table.
const fixtureLatest = fixtureCheckpoint + fixtureAfter

// Checkpoint schema, as Spark writes it (every field nullable).
type cpRow struct {
	Txn      *cpTxn      `parquet:"txn,optional"`
	Add      *cpAdd      `parquet:"add,optional"`
	Remove   *cpRemove   `parquet:"remove,optional"`
	MetaData *cpMetaData `parquet:"metaData,optional"`
	Protocol *cpProtocol `parquet:"protocol,optional"`
}

type cpTxn struct {
	AppID       *string `parquet:"appId,optional"`
	Version     *int64  `parquet:"version,optional"`
	LastUpdated *int64  `parquet:"lastUpdated,optional"`
}

type cpAdd struct {
	Path             *string           `parquet:"path,optional"`
	PartitionValues  map[string]string `parquet:"partitionValues,optional"`
	Size             *int64            `parquet:"size,optional"`
	ModificationTime *int64            `parquet:"modificationTime,optional"`
	DataChange       *bool             `parquet:"dataChange,optional"`
	Tags             map[string]string `parquet:"tags,optional"`
	Stats            *string           `parquet:"stats,optional"`
}

type cpRemove struct {
	Path                 *string           `parquet:"path,optional"`
	DeletionTimestamp    *int64            `parquet:"deletionTimestamp,optional"`
	DataChange           *bool             `parquet:"dataChange,optional"`
	ExtendedFileMetadata *bool             `parquet:"extendedFileMetadata,optional"`
	PartitionValues      map[string]string `parquet:"partitionValues,optional"`
	Size                 *int64            `parquet:"size,optional"`
}

type cpFormat struct {
	Provider *string           `parquet:"provider,optional"`
	Options  map[string]string `parquet:"options,optional"`
}

type cpMetaData struct {
	ID               *string           `parquet:"id,optional"`
	Name             *string           `parquet:"name,optional"`
	Description      *string           `parquet:"description,optional"`
	Format           *cpFormat         `parquet:"format,optional"`
	SchemaString     *string           `parquet:"schemaString,optional"`
	PartitionColumns []string          `parquet:"partitionColumns,list,optional"`
	Configuration    map[string]string `parquet:"configuration,optional"`
	CreatedTime      *int64            `parquet:"createdTime,optional"`
}

type cpProtocol struct {
	MinReaderVersion *int32   `parquet:"minReaderVersion,optional"`
	MinWriterVersion *int32   `parquet:"minWriterVersion,optional"`
	ReaderFeatures   []string `parquet:"readerFeatures,list,optional"`
	WriterFeatures   []string `parquet:"writerFeatures,list,optional"`
}

func ptr[T any](v T) *T { return &v }

const (
	fixtureTableID = "8f5b2a7c-3d1e-4c6b-9a0f-2e7d5c1b4a93"
	fixtureSchema  = `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
		`{"name":"customer","type":"string","nullable":true,"metadata":{"comment":"customer name"}},` +
		`{"name":"amount","type":"decimal(18,2)","nullable":true,"metadata":{}},` +
		`{"name":"tags","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"day","type":"date","nullable":true,"metadata":{}}]}`
	fixtureCreated = int64(1735689600000)
)

var (
	fixtureReaderFeatures = []string{"deletionVectors", "timestampNtz"}
	fixtureWriterFeatures = []string{"appendOnly", "invariants", "checkConstraints", "deletionVectors", "timestampNtz"}
)

func fixtureConfig(changed bool) map[string]string {
	c := map[string]string{
		"delta.enableDeletionVectors":    "true",
		"delta.checkpointInterval":       "100",
		"delta.logRetentionDuration":     "interval 30 days",
		"delta.autoOptimize.autoCompact": "true",
	}
	if changed {
		c["delta.logRetentionDuration"] = "interval 7 days"
		c["owner.team"] = "payments"
	}
	return c
}

func fixtureMetadataJSON(changed bool) map[string]any {
	return map[string]any{"id": fixtureTableID, "name": "orders", "description": "benchmark table",
		"format":       map[string]any{"provider": "parquet", "options": map[string]string{}},
		"schemaString": fixtureSchema, "partitionColumns": []string{"day"},
		"configuration": fixtureConfig(changed), "createdTime": fixtureCreated}
}

// fixtureAdd returns the i-th data file of the table: a unique path under
// its partition and realistic per-file stats.
func fixtureAdd(i int) (path string, part map[string]string, size int64, mtime int64, stats string) {
	day := fmt.Sprintf("2025-%02d-%02d", 1+(i/28)%12, 1+i%28)
	path = fmt.Sprintf("day=%s/part-%05d-%08x-%04x-4%03x-a%03x-%012x.c000.zstd.parquet",
		day, i%100000, uint32(i*2654435761), i&0xffff, i%4096, (i/7)%4096, uint64(i)*0x9E3779B9)
	part = map[string]string{"day": day}
	size = 64<<20 + int64(i%1000)*4096
	mtime = fixtureCreated + int64(i)*1000
	rows := 500000 + i%100000
	stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"ts":"%sT00:00:00.000Z","customer":"aaron-%05d","amount":0.01},`+
		`"maxValues":{"id":%d,"ts":"%sT23:59:59.999Z","customer":"zoe-%05d","amount":99999.99},`+
		`"nullCount":{"id":0,"ts":%d,"customer":%d,"amount":0,"tags":%d},"tightBounds":true}`,
		rows, int64(i)*1_000_000, day, i%99999, int64(i)*1_000_000+int64(rows), day, i%99999, i%7, i%13, rows/2)
	return path, part, size, mtime, stats
}

// fixtureDir returns the table directory for a fixture with nFiles adds in
// its checkpoint, generating it first if it is not cached.
func fixtureDir(tb testing.TB, nFiles int) string {
	tb.Helper()
	return cachedFixtureDir(tb, fmt.Sprintf("table-%d-%s", nFiles, fixtureRev), func(tmp string) error {
		return writeFixture(tmp, nFiles)
	})
}

// cachedFixtureDir returns the fixture directory name under the bench
// cache ($DELTASYNC_CACHE/bench, else the temp dir's), made by write into a
// directory of this process's first if it is not complete (.complete), and
// renamed into place: a test process that made it first wins.
func cachedFixtureDir(tb testing.TB, name string, write func(dir string) error) string {
	tb.Helper()
	base := os.Getenv("DELTASYNC_CACHE")
	if base == "" {
		base = filepath.Join(os.TempDir(), "deltasync-cache")
	}
	dir := filepath.Join(base, "bench", name)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	tmp := fmt.Sprintf("%s.tmp%d", dir, os.Getpid())
	_ = os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	if err := write(tmp); err != nil {
		tb.Fatalf("generate fixture %s: %v", dir, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr == nil {
			return dir // another test process made it first
		}
		tb.Fatal(err)
	}
	return dir
}

func writeFixture(dir string, nFiles int) error {
	logPath := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logPath, 0o755); err != nil {
		return err
	}
	// JSON commits kept before the checkpoint: appends of fixtureAddsPerTxn files.
	for v := fixtureCheckpoint - fixtureBefore + 1; v <= fixtureLatest; v++ {
		var lines []any
		ts := fixtureCreated + int64(v)*60_000
		lines = append(lines, map[string]any{"commitInfo": map[string]any{
			"timestamp": ts, "operation": "WRITE", "operationParameters": map[string]string{"mode": "Append"},
			"isBlindAppend": true, "engineInfo": "deltasync-bench"}})
		if v == fixtureMetaChange {
			lines = append(lines, map[string]any{"metaData": fixtureMetadataJSON(true)})
		}
		for k := 0; k < fixtureAddsPerTxn; k++ {
			i := nFiles + v*fixtureAddsPerTxn + k
			path, part, size, mtime, stats := fixtureAdd(i)
			lines = append(lines, map[string]any{"add": map[string]any{"path": path, "partitionValues": part,
				"size": size, "modificationTime": mtime, "dataChange": true, "stats": stats}})
		}
		if err := writeJSONLines(filepath.Join(logPath, fmt.Sprintf("%020d.json", v)), lines); err != nil {
			return err
		}
	}
	if err := writeCheckpoint(filepath.Join(logPath, fmt.Sprintf("%020d.checkpoint.parquet", fixtureCheckpoint)), nFiles); err != nil {
		return err
	}
	lc, _ := json.Marshal(map[string]any{"version": fixtureCheckpoint, "size": nFiles + 3, "numOfAddFiles": nFiles})
	return os.WriteFile(filepath.Join(logPath, "_last_checkpoint"), lc, 0o644)
}

func writeJSONLines(path string, lines []any) error {
	var sb strings.Builder
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// writeCheckpoint writes a classic checkpoint: protocol, metaData and a txn
// row in the first row group (Spark's checkpoints carry them among the
// state rows; here they are at least present and first), then nFiles add
// rows and a few remove tombstones in row groups of fixtureRowGroup rows.
func writeCheckpoint(path string, nFiles int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := parquet.NewGenericWriter[cpRow](f,
		parquet.Compression(&parquet.Snappy),
		parquet.CreatedBy("deltasync-bench", fixtureRev, ""),
	)
	head := []cpRow{
		{Protocol: &cpProtocol{MinReaderVersion: ptr(int32(3)), MinWriterVersion: ptr(int32(7)),
			ReaderFeatures: fixtureReaderFeatures, WriterFeatures: fixtureWriterFeatures}},
		{MetaData: &cpMetaData{ID: ptr(fixtureTableID), Name: ptr("orders"), Description: ptr("benchmark table"),
			Format: &cpFormat{Provider: ptr("parquet"), Options: map[string]string{}}, SchemaString: ptr(fixtureSchema),
			PartitionColumns: []string{"day"}, Configuration: fixtureConfig(false), CreatedTime: ptr(fixtureCreated)}},
		{Txn: &cpTxn{AppID: ptr("streaming-ingest"), Version: ptr(int64(fixtureCheckpoint)), LastUpdated: ptr(fixtureCreated)}},
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	batch := make([]cpRow, 0, 4096)
	inGroup := 0
	for i := 0; i < nFiles; i++ {
		path, part, size, mtime, stats := fixtureAdd(i)
		batch = append(batch, cpRow{Add: &cpAdd{Path: ptr(path), PartitionValues: part, Size: ptr(size),
			ModificationTime: ptr(mtime), DataChange: ptr(false), Stats: ptr(stats)}})
		if i%1000 == 999 { // a tombstone per thousand files
			batch = append(batch, cpRow{Remove: &cpRemove{Path: ptr("removed/" + path), DeletionTimestamp: ptr(mtime),
				DataChange: ptr(true), ExtendedFileMetadata: ptr(true), PartitionValues: part, Size: ptr(size)}})
		}
		if len(batch) == cap(batch) || i == nFiles-1 {
			if _, err := w.Write(batch); err != nil {
				return err
			}
			inGroup += len(batch)
			batch = batch[:0]
			if inGroup >= fixtureRowGroup {
				if err := w.Flush(); err != nil {
					return err
				}
				inGroup = 0
			}
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}
