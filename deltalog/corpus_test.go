package deltalog

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gocloud.dev/blob/fileblob"
)

// corpusRow is one line of manifest.tsv.
type corpusRow struct {
	Name, Outcome string
}

// readManifest reads manifest.tsv.
func readManifest(t testing.TB) []corpusRow {
	t.Helper()
	f, err := os.Open(filepath.Join(testcorpus.Dir(t), "manifest.tsv"))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]int{}
	for i, h := range recs[0] {
		head[h] = i
	}
	var rows []corpusRow
	for _, rec := range recs[1:] {
		rows = append(rows, corpusRow{Name: rec[head["name"]], Outcome: rec[head["expected_outcome"]]})
	}
	return rows
}

// expectedState is one table's entry in derived_expected.json.
type expectedState struct {
	Version                       int64           `json:"version"`
	Protocol                      *Protocol       `json:"protocol"`
	MetaData                      *Metadata       `json:"metaData"`
	LatestCommitInCommitTimestamp *int64          `json:"latestCommitInCommitTimestamp"`
	LatestCommitInfoTimestamp     *int64          `json:"latestCommitInfoTimestamp"`
	MaxRatifiedVersion            *int64          `json:"maxRatifiedVersion"`
	WithCatalog                   *expectedState  `json:"withCatalogRatifiedStagedCommits"`
	Raw                           json.RawMessage `json:"-"`
}

func readExpected(t testing.TB) map[string]*expectedState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), "derived_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]*expectedState
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openCorpusTable opens one corpus table through fileblob.
func openCorpusTable(t testing.TB, name string, opts ...Option) *Table {
	t.Helper()
	b, err := fileblob.OpenBucket(filepath.Join(testcorpus.Dir(t), name), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return NewTable(b, name, opts...)
}

// ratifiedFromDir lists a corpus table's _staged_commits as if the
// catalog had ratified all of them.
func ratifiedFromDir(t testing.TB, name string) []RatifiedCommit {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(testcorpus.Dir(t), name, "_delta_log", "_staged_commits"))
	if err != nil {
		return nil
	}
	var out []RatifiedCommit
	for _, e := range ents {
		p := parseLogPath(stagedKey(e.Name()))
		if p.Kind == kindStagedCommit {
			out = append(out, RatifiedCommit{Version: p.Version, FileName: e.Name()})
		}
	}
	return out
}

// refusals maps a manifest error outcome to the sentinel and a message part.
var refusals = map[string]struct {
	sentinel error
	contains string
}{
	"error: unsupported reader version 99":            {ErrUnsupportedFeature, "reader version 99"},
	"error: protocol missing in checkpoint":           {ErrMissingProtocol, "checkpoint.parquet"},
	"error: no metaData":                              {ErrMissingMetadata, "00000000000000000000.json"},
	"error: non-contiguous versions after checkpoint": {ErrVersionGap, "commit 12 is missing"},
	"error: unsupported reader feature catalogOwned":  {ErrUnsupportedFeature, `"catalogOwned"`},
	"error: non-contiguous versions":                  {ErrVersionGap, "version 1"},
}

// TestCorpus loads every table of the shared corpus and checks it against
// the manifest: refused tables fail with the right sentinel and message,
// the others match derived_expected.json.
func TestCorpus(t *testing.T) {
	expected := readExpected(t)
	for _, row := range readManifest(t) {
		t.Run(row.Name, func(t *testing.T) {
			tbl := openCorpusTable(t, row.Name)
			snap, err := tbl.Load(context.Background(), LoadOptions{})
			if strings.HasPrefix(row.Outcome, "error") {
				want, ok := refusals[row.Outcome]
				if !ok {
					t.Fatalf("no refusal rule for outcome %q", row.Outcome)
				}
				checkRefusal(t, row.Name, err, want.sentinel, want.contains)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			exp := expected[row.Name]
			checkState(t, snap, exp)
			if exp.WithCatalog != nil {
				maxVersion := *exp.WithCatalog.MaxRatifiedVersion
				snap, err := tbl.Load(context.Background(), LoadOptions{RatifiedCommits: ratifiedFromDir(t, row.Name), MaxRatifiedVersion: &maxVersion})
				if err != nil {
					t.Fatalf("Load with ratified commits: %v", err)
				}
				checkState(t, snap, exp.WithCatalog)
			}
		})
	}
}

// checkRefusal asserts err is a *LogError naming the table and wrapping sentinel.
func checkRefusal(t *testing.T, table string, err, sentinel error, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Load succeeded, want %v", sentinel)
	}
	var le *LogError
	if !errors.As(err, &le) {
		t.Fatalf("error %T %v is not a *LogError", err, err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %v does not wrap %v", err, sentinel)
	}
	if le.Table != table || le.File == "" {
		t.Errorf("error %+v does not name table %q and a file", le, table)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Errorf("error %q does not mention %q", err, contains)
	}
}

// checkState compares a snapshot with the derived expectation.
func checkState(t *testing.T, snap *Snapshot, exp *expectedState) {
	t.Helper()
	if snap.Version != exp.Version {
		t.Errorf("version = %d, want %d", snap.Version, exp.Version)
	}
	if diff := cmp.Diff(*exp.Protocol, snap.Protocol, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("protocol (-want +got):\n%s", diff)
	}
	wantMD := *exp.MetaData
	normalizeMetadata(&wantMD)
	if diff := cmp.Diff(wantMD, snap.Metadata, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("metaData (-want +got):\n%s", diff)
	}
	wantSchema, err := ParseSchema(exp.MetaData.SchemaString)
	if err != nil {
		t.Fatalf("expected schema: %v", err)
	}
	if diff := cmp.Diff(wantSchema, snap.Schema); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	wantTS, wantSource := exp.LatestCommitInfoTimestamp, TimestampCommitInfo
	if snap.Metadata.Configuration["delta.enableInCommitTimestamps"] == "true" && exp.LatestCommitInCommitTimestamp != nil {
		wantTS, wantSource = exp.LatestCommitInCommitTimestamp, TimestampInCommit
	}
	if wantTS != nil && snap.CommitTimestamp != *wantTS {
		t.Errorf("commitTimestamp = %d, want %d", snap.CommitTimestamp, *wantTS)
	}
	if wantTS != nil && snap.CommitTimestampSource != wantSource {
		t.Errorf("commitTimestamp from %v, want from %v", snap.CommitTimestampSource, wantSource)
	}
	if snap.CatalogManaged != snap.Protocol.catalogManaged() {
		t.Errorf("catalogManaged = %v", snap.CatalogManaged)
	}
}
