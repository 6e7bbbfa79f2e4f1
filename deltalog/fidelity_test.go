package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestSnapshotJSONKeepsLogSpelling: for JSON-only tables, the snapshot's
// protocol and metaData are byte-for-byte (after compaction) the newest
// actions as written in the commits.
func TestSnapshotJSONKeepsLogSpelling(t *testing.T) {
	for _, row := range readManifest(t) {
		if strings.HasPrefix(row.Outcome, "error") {
			continue
		}
		commits, _ := filepath.Glob(filepath.Join(testcorpus.Dir(t), row.Name, "_delta_log", "*"))
		var lastP, lastM json.RawMessage
		jsonOnly := true
		for _, f := range commits {
			p := parseLogPath("_delta_log/" + filepath.Base(f))
			switch p.Kind {
			case kindCheckpoint, kindMultiCheckpoint, kindV2Checkpoint, kindCompaction:
				jsonOnly = false
			case kindCommit:
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				fa, err := parseActions(data)
				if err != nil {
					t.Fatal(err)
				}
				if fa.rawProtocol != nil {
					lastP = fa.rawProtocol
				}
				if fa.rawMetadata != nil {
					lastM = fa.rawMetadata
				}
			}
		}
		if !jsonOnly || len(ratifiedFromDir(t, row.Name)) > 0 {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			snap, err := openCorpusTable(t, row.Name).Load(context.Background(), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(snap)
			if err != nil {
				t.Fatal(err)
			}
			if byValue, _ := json.Marshal(*snap); !bytes.Equal(byValue, out) {
				t.Errorf("Snapshot and *Snapshot marshal differently")
			}
			var got struct {
				Protocol json.RawMessage `json:"protocol"`
				Metadata json.RawMessage `json:"metaData"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				want, got json.RawMessage
			}{{"protocol", lastP, got.Protocol}, {"metaData", lastM, got.Metadata}} {
				var w bytes.Buffer
				if err := json.Compact(&w, c.want); err != nil {
					t.Fatal(err)
				}
				if w.String() != string(c.got) {
					t.Errorf("%s:\n got %s\nwant %s", c.what, c.got, w.String())
				}
			}
		})
	}
}

// TestSourceStatedAssertions pins what the source repositories themselves
// assert about corpus tables (these win over the derived expectations).
func TestSourceStatedAssertions(t *testing.T) {
	tests := []struct {
		table          string
		ratified       bool
		max            int64
		version        int64
		reader, writer int
		fields         []string // top-level schema field names
	}{
		{table: "checkpoint", version: 14},
		{table: "delta-0.8.0", version: 1, reader: 1, writer: 2},
		{table: "log-replay-latest-metadata-protocol", version: 2, reader: 3, writer: 7, fields: []string{"col1", "col2"}},
		{table: "checkpoint-v2-table", version: 9},
		{table: "table_failed_last_checkpoint_update", version: 3},
		{table: "table_with_partitioning_mapping", version: 4},
		{table: "catalog_managed_0", ratified: true, max: 2, version: 2, fields: []string{"part1", "col1"}},
		{table: "basic_catalog_managed", ratified: true, max: 3, version: 3},
		{table: "spark-variant-checkpoint", version: 2},
		{table: "v2-checkpoint-json", version: 2},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			opts := LoadOptions{}
			if tt.ratified {
				opts = LoadOptions{RatifiedCommits: ratifiedFromDir(t, tt.table), MaxRatifiedVersion: &tt.max}
			}
			snap, err := openCorpusTable(t, tt.table).Load(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Version != tt.version {
				t.Errorf("version %d, want %d", snap.Version, tt.version)
			}
			if tt.reader != 0 && (snap.Protocol.MinReaderVersion != tt.reader || snap.Protocol.MinWriterVersion != tt.writer) {
				t.Errorf("protocol %d/%d, want %d/%d", snap.Protocol.MinReaderVersion, snap.Protocol.MinWriterVersion, tt.reader, tt.writer)
			}
			if tt.fields != nil {
				var names []string
				for _, f := range snap.Schema.Fields {
					names = append(names, f.Name)
				}
				if strings.Join(names, ",") != strings.Join(tt.fields, ",") {
					t.Errorf("fields %v, want %v", names, tt.fields)
				}
			}
		})
	}
}
