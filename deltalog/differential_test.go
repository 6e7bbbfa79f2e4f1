package deltalog

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gocloud.dev/blob/memblob"
)

// The differential test writes a table with delta-rs (testdata/deltars/gen.py:
// create, append, schema evolution, property changes and an unset,
// description and name changes, protocol upgrades, check constraints, a
// classic checkpoint and commits after it; v2Checkpoint, columnMapping and
// in-commit timestamps on a second table) and checks that deltalog replays
// every version to what delta-rs reads.
// It needs DELTASYNC_PYTHON (a python with deltalake; .ci/setup-python.sh).

// deltarsVersion is one version as delta-rs reads it (gen.py's dump).
type deltarsVersion struct {
	Version  int64 `json:"version"`
	Protocol struct {
		MinReaderVersion int      `json:"minReaderVersion"`
		MinWriterVersion int      `json:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures"`
		WriterFeatures   []string `json:"writerFeatures"`
	} `json:"protocol"`
	Metadata struct {
		ID               string            `json:"id"`
		Name             *string           `json:"name"`
		Description      *string           `json:"description"`
		PartitionColumns []string          `json:"partitionColumns"`
		Configuration    map[string]string `json:"configuration"`
		CreatedTime      *int64            `json:"createdTime"`
	} `json:"metadata"`
	Schema any `json:"schema"`
}

type deltarsTable struct {
	Skipped  []string         `json:"skipped"`
	Versions []deltarsVersion `json:"versions"`
}

type deltarsDump struct {
	Deltalake string                  `json:"deltalake"`
	Tables    map[string]deltarsTable `json:"tables"`
}

// comparable view of one version, filled from either reader.
type diffView struct {
	Version          int64
	MinReader        int
	MinWriter        int
	ReaderFeatures   []string
	WriterFeatures   []string
	ID               string
	Name             string
	Description      string
	PartitionColumns []string
	Configuration    map[string]string
	CreatedTime      int64
	Schema           any
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func viewOfDeltars(v deltarsVersion) diffView {
	return diffView{
		Version: v.Version, MinReader: v.Protocol.MinReaderVersion, MinWriter: v.Protocol.MinWriterVersion,
		ReaderFeatures: sortedCopy(v.Protocol.ReaderFeatures), WriterFeatures: sortedCopy(v.Protocol.WriterFeatures),
		ID: v.Metadata.ID, Name: deref(v.Metadata.Name), Description: deref(v.Metadata.Description),
		PartitionColumns: v.Metadata.PartitionColumns, Configuration: v.Metadata.Configuration,
		CreatedTime: deref(v.Metadata.CreatedTime), Schema: v.Schema,
	}
}

func viewOfSnapshot(t *testing.T, s *Snapshot) diffView {
	t.Helper()
	var schema any
	if err := json.Unmarshal([]byte(s.Metadata.SchemaString), &schema); err != nil {
		t.Fatalf("version %d: schemaString is not JSON: %v", s.Version, err)
	}
	return diffView{
		Version: s.Version, MinReader: s.Protocol.MinReaderVersion, MinWriter: s.Protocol.MinWriterVersion,
		ReaderFeatures: sortedCopy(s.Protocol.ReaderFeatures), WriterFeatures: sortedCopy(s.Protocol.WriterFeatures),
		ID: s.Metadata.ID, Name: s.Metadata.Name, Description: s.Metadata.Description,
		PartitionColumns: s.Metadata.PartitionColumns, Configuration: s.Metadata.Configuration,
		CreatedTime: deref(s.Metadata.CreatedTime), Schema: schema,
	}
}

// runDeltarsGen runs gen.py into a temp dir and returns the dir and dump.
func runDeltarsGen(t *testing.T) (string, deltarsDump) {
	t.Helper()
	py := os.Getenv("DELTASYNC_PYTHON")
	if py == "" {
		skipOrFail(t, "DELTASYNC_PYTHON unset: needs a python with deltalake (eval \"$(bash .ci/setup-python.sh start)\")")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "deltars", "gen.py"), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dump deltarsDump
	if err := json.Unmarshal(data, &dump); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	if len(dump.Tables) == 0 {
		t.Fatal("gen.py wrote no tables")
	}
	for name, tbl := range dump.Tables {
		if len(tbl.Versions) < 2 {
			t.Fatalf("gen.py wrote %d versions of %s", len(tbl.Versions), name)
		}
		for _, s := range tbl.Skipped {
			t.Logf("%s: deltalake %s could not do step %s", name, dump.Deltalake, s)
		}
	}
	return dir, dump
}

// logFileVersion returns the version of a commit or checkpoint file name
// (<20 digits>.json, <20 digits>.checkpoint...), or ok=false for others.
func logFileVersion(name string) (int64, bool) {
	if len(name) < 21 || name[20] != '.' {
		return 0, false
	}
	rest := name[21:]
	if rest != "json" && !strings.HasPrefix(rest, "checkpoint.") {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil
}

func TestDifferentialDeltaRS(t *testing.T) {
	dir, dump := runDeltarsGen(t)
	names := make([]string, 0, len(dump.Tables))
	for name := range dump.Tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			diffTable(t, filepath.Join(dir, name), dump.Deltalake, dump.Tables[name])
		})
	}
}

// diffTable replays every version of the delta-rs table at root (its log
// truncated at that version, in a memblob) and compares with delta-rs.
func diffTable(t *testing.T, root, deltalake string, tbl deltarsTable) {
	ctx := context.Background()
	logPath := filepath.Join(root, "_delta_log")
	entries, err := os.ReadDir(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var lastCP struct {
		Version int64 `json:"version"`
	}
	lcData, lcErr := os.ReadFile(filepath.Join(logPath, "_last_checkpoint"))
	if lcErr == nil {
		if err := json.Unmarshal(lcData, &lastCP); err != nil {
			t.Fatalf("_last_checkpoint: %v", err)
		}
	}
	opts := cmpopts.EquateEmpty()
	for _, want := range tbl.Versions {
		if want.Metadata.ID == "" || want.Schema == nil {
			t.Fatalf("delta-rs dump of version %d has no metadata id or schema", want.Version)
		}
		t.Run("v"+strconv.FormatInt(want.Version, 10), func(t *testing.T) {
			// The log truncated at this version, as it was when it was written.
			b := memblob.OpenBucket(nil)
			defer b.Close()
			for _, e := range entries {
				v, ok := logFileVersion(e.Name())
				if e.Name() == "_last_checkpoint" {
					v, ok = lastCP.Version, lcErr == nil
				}
				if !ok || v > want.Version {
					continue
				}
				data, err := os.ReadFile(filepath.Join(logPath, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := b.WriteAll(ctx, logDir+e.Name(), data, nil); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := NewTable(b, filepath.Base(root)+"@v"+strconv.FormatInt(want.Version, 10)).Load(ctx, LoadOptions{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(viewOfDeltars(want), viewOfSnapshot(t, snap), opts); diff != "" {
				t.Errorf("deltalog differs from delta-rs %s at version %d (-delta-rs +deltalog):\n%s", deltalake, want.Version, diff)
			}
		})
	}
	t.Run("latest via Open", func(t *testing.T) {
		tbl2, err := Open(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		defer tbl2.Close()
		snap, err := tbl2.Load(ctx, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := tbl.Versions[len(tbl.Versions)-1]
		if diff := cmp.Diff(viewOfDeltars(want), viewOfSnapshot(t, snap), opts); diff != "" {
			t.Errorf("latest (-delta-rs +deltalog):\n%s", diff)
		}
	})
}
