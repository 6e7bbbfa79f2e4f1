package deltalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// paths parses keys given as names under _delta_log/.
func paths(names ...string) []logPath {
	var out []logPath
	for _, n := range names {
		out = append(out, parseLogPath(logDir+n))
	}
	return out
}

func v(n int64, suffix string) string { return fmt.Sprintf("%020d.%s", n, suffix) }

func TestBuildSegment(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	tests := []struct {
		name      string
		in        segmentInput
		version   int64
		cp        int64
		units     []string // names of units, oldest first
		errIs     error
		errVer    int64
		errSubstr string
	}{
		{name: "json only", in: segmentInput{files: paths(v(0, "json"), v(1, "json")), floor: -1},
			version: 1, cp: -1, units: []string{v(0, "json"), v(1, "json")}},
		{name: "incomplete multi-part falls back to older checkpoint",
			in: segmentInput{files: paths(v(2, "checkpoint.parquet"), v(2, "json"), v(3, "json"),
				v(4, "checkpoint.0000000001.0000000002.parquet"), v(4, "json")), floor: -1},
			version: 4, cp: 2, units: []string{v(3, "json"), v(4, "json")}},
		{name: "complete multi-part", in: segmentInput{files: paths(
			v(4, "checkpoint.0000000001.0000000002.parquet"), v(4, "checkpoint.0000000002.0000000002.parquet"), v(4, "json")), floor: -1},
			version: 4, cp: 4},
		{name: "log starts at a checkpoint", in: segmentInput{files: paths(v(7, "checkpoint.parquet"), v(8, "json")), floor: -1},
			version: 8, cp: 7, units: []string{v(8, "json")}},
		{name: "gap before checkpoint is irrelevant", in: segmentInput{files: paths(v(0, "json"), v(2, "json"), v(3, "checkpoint.parquet"), v(3, "json"), v(4, "json")), floor: -1},
			version: 4, cp: 3, units: []string{v(4, "json")}},
		{name: "gap after checkpoint", in: segmentInput{files: paths(v(3, "checkpoint.parquet"), v(4, "json"), v(6, "json")), floor: -1},
			errIs: ErrVersionGap, errVer: 5},
		{name: "no checkpoint and no commit 0", in: segmentInput{files: paths(v(3, "json"), v(4, "json")), floor: -1},
			errIs: ErrVersionGap, errVer: 0, errSubstr: "first commit is version 3"},
		{name: "empty log", in: segmentInput{files: paths("_last_checkpoint"), floor: -1}, errIs: ErrNotATable},
		{name: "compactions replace commits but never the latest", in: segmentInput{files: paths(
			v(0, "json"), v(0, "00000000000000000005.compacted.json"), v(1, "json"), v(2, "json"), v(3, "json"), v(4, "json"), v(5, "json"),
			v(6, "json"), v(6, "00000000000000000007.compacted.json"), v(7, "json")), floor: -1},
			version: 7, cp: -1, units: []string{v(0, "00000000000000000005.compacted.json"), v(6, "json"), v(7, "json")}},
		{name: "compaction fills cleaned-up commits", in: segmentInput{files: paths(
			v(0, "json"), v(1, "00000000000000000003.compacted.json"), v(4, "json")), floor: -1},
			version: 4, cp: -1, units: []string{v(0, "json"), v(1, "00000000000000000003.compacted.json"), v(4, "json")}},
		{name: "ratified staged commits win and extend",
			in: segmentInput{files: paths(v(0, "json"), v(1, "json")), floor: -1,
				ratified: paths("_staged_commits/"+v(1, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json"), "_staged_commits/"+v(2, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json"))},
			version: 2, cp: -1, units: []string{v(0, "json"), "_staged_commits/" + v(1, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json"), "_staged_commits/" + v(2, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json")}},
		{name: "above max ratified version ignored",
			in:      segmentInput{files: paths(v(0, "json"), v(1, "json"), v(2, "json"), v(2, "checkpoint.parquet")), floor: -1, maxVersion: i64(1)},
			version: 1, cp: -1, units: []string{v(0, "json"), v(1, "json")}},
		{name: "hint without a checkpoint asks for a full listing",
			in: segmentInput{files: paths(v(5, "json"), v(6, "json")), floor: 5}, errIs: errNoCheckpointAtFloor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg, err := buildSegment(tt.in)
			if tt.errIs != nil {
				if err == nil || !errors.Is(err.Err, tt.errIs) {
					t.Fatalf("err = %v, want %v", err, tt.errIs)
				}
				if tt.errVer != 0 || tt.errIs == ErrVersionGap {
					if err.Version != tt.errVer {
						t.Errorf("error version = %d, want %d", err.Version, tt.errVer)
					}
				}
				if tt.errSubstr != "" && !strings.Contains(err.Error(), tt.errSubstr) {
					t.Errorf("error %q lacks %q", err, tt.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var units []string
			for _, u := range seg.units {
				units = append(units, u.Key[len(logDir):])
			}
			if seg.version != tt.version || seg.cpVersion != tt.cp {
				t.Errorf("version %d cp %d, want %d cp %d", seg.version, seg.cpVersion, tt.version, tt.cp)
			}
			if diff := cmp.Diff(tt.units, units); diff != "" {
				t.Errorf("units (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHintPointsAtDeletedCheckpoint: a _last_checkpoint naming a checkpoint
// that is gone costs a second LIST, never a wrong answer.
func TestHintPointsAtDeletedCheckpoint(t *testing.T) {
	ctx := context.Background()
	tbl, b, c := memTable(t, "checkpoint")
	put(t, b, "_delta_log/_last_checkpoint", `{"version":12,"size":3}`)
	snap, err := tbl.Load(ctx, LoadOptions{})
	if err != nil || snap.Version != 14 || snap.state.cpVersion != 10 {
		t.Fatalf("Load = %+v, %v", snap, err)
	}
	if lists, _ := c.counts(); lists != 2 {
		t.Errorf("LISTs = %d, want 2 (hinted listing, then full)", lists)
	}
}

// TestCompactionUsed: the compacted corpus table is read through its
// compaction files, not the commits they cover.
func TestCompactionUsed(t *testing.T) {
	tbl, c := countedCorpusTable(t, "compacted-log-files-table")
	snap, err := tbl.Load(context.Background(), LoadOptions{})
	if err != nil || snap.Version != 25 {
		t.Fatalf("Load = %v, %v", snap, err)
	}
	_, gets := c.counts()
	for _, k := range gets {
		p := parseLogPath(k)
		if p.Kind == kindCommit && p.Version <= 15 {
			t.Errorf("read %s although a compaction covers it", k)
		}
	}
}
