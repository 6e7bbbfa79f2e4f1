package deltalog

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"gocloud.dev/blob/memblob"
)

// truncationOffsets are the lengths each file is cut to.
func truncationOffsets(n int) []int {
	offs := []int{0, 1, n / 3, n / 2, n - 8, n - 1}
	var out []int
	for _, o := range offs {
		if o >= 0 && o < n && (len(out) == 0 || out[len(out)-1] != o) {
			out = append(out, o)
		}
	}
	return out
}

// TestTruncatedFilesNeverPanic cuts every commit, checkpoint, compaction
// and _last_checkpoint of every corpus table at several offsets and loads
// the table: Load must return a snapshot or a *LogError, never panic.
// A truncated file that Load reads must be refused as ErrCorrupt or lead
// to a missing action, never silently accepted as Parquet.
func TestTruncatedFilesNeverPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every corpus table a few thousand times")
	}
	ctx := context.Background()
	for _, row := range readManifest(t) {
		t.Run(row.Name, func(t *testing.T) {
			root := filepath.Join(testcorpus.Dir(t), row.Name)
			mb := memblob.OpenBucket(nil)
			defer mb.Close()
			files := map[string][]byte{}
			testcorpus.ReadTree(t, filepath.Join(root, "_delta_log"), func(rel string, data []byte) error {
				key := "_delta_log/" + rel
				files[key] = data
				return mb.WriteAll(ctx, key, data, nil)
			})
			tbl := NewTable(mb, row.Name)
			for key, data := range files {
				switch parseLogPath(key).Kind {
				case kindCommit, kindCheckpoint, kindMultiCheckpoint, kindV2Checkpoint, kindCompaction, kindLastCheckpoint:
				default:
					continue
				}
				for _, n := range truncationOffsets(len(data)) {
					if err := mb.WriteAll(ctx, key, data[:n], nil); err != nil {
						t.Fatal(err)
					}
					_, err := tbl.Load(ctx, LoadOptions{})
					var le *LogError
					if err != nil && !errors.As(err, &le) {
						t.Errorf("%s cut to %d: error %T %v is not a *LogError", key, n, err, err)
					}
					if err != nil && le.Table != row.Name {
						t.Errorf("%s cut to %d: error does not name the table: %v", key, n, err)
					}
					if err != nil && strings.HasSuffix(key, ".parquet") && le.File == key && !errors.Is(err, ErrCorrupt) {
						t.Errorf("%s cut to %d: %v, want ErrCorrupt", key, n, err)
					}
				}
				if err := mb.WriteAll(ctx, key, data, nil); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestTruncatedCheckpointBytes cuts every corpus Parquet checkpoint at
// many offsets and reads it directly: always ErrCorrupt, never a panic.
func TestTruncatedCheckpointBytes(t *testing.T) {
	for _, data := range corpusFiles(t, kindCheckpoint, kindMultiCheckpoint, kindV2Checkpoint) {
		if !bytes.HasPrefix(data, []byte("PAR1")) {
			continue
		}
		for n := 0; n < len(data); n += 1 + len(data)/97 {
			if _, err := readParquetActions(bytes.NewReader(data[:n]), int64(n), true); !errors.Is(err, ErrCorrupt) {
				t.Errorf("cut to %d of %d: err = %v, want ErrCorrupt", n, len(data), err)
			}
		}
	}
}
