package deltalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLogPath(t *testing.T) {
	const u = "d55fb2cb-b8d3-4362-8572-c52142a9da1f"
	tests := []struct {
		key  string
		want logPath
	}{
		{"_delta_log/00000000000000000010.json", logPath{Kind: kindCommit, Version: 10}},
		{"_delta_log/00000000000000000010.crc", logPath{Kind: kindChecksum, Version: 10}},
		{"_delta_log/00000000000000000010.checkpoint.parquet", logPath{Kind: kindCheckpoint, Version: 10, Parquet: true}},
		{"_delta_log/00000000000000000001.checkpoint.0000000002.0000000003.parquet", logPath{Kind: kindMultiCheckpoint, Version: 1, Part: 2, Parts: 3, Parquet: true}},
		{"_delta_log/00000000000000000008.checkpoint." + u + ".json", logPath{Kind: kindV2Checkpoint, Version: 8, UUID: u}},
		{"_delta_log/00000000000000000008.checkpoint." + u + ".parquet", logPath{Kind: kindV2Checkpoint, Version: 8, UUID: u, Parquet: true}},
		{"_delta_log/00000000000000000006.00000000000000000015.compacted.json", logPath{Kind: kindCompaction, Version: 6, End: 15}},
		{"_delta_log/_last_checkpoint", logPath{Kind: kindLastCheckpoint}},
		{"_delta_log/_staged_commits/00000000000000000002." + u + ".json", logPath{Kind: kindStagedCommit, Version: 2, UUID: u}},
		// ignored
		{"_delta_log/.00000000000000000000.json.crc", logPath{}},
		{"_delta_log/00000000000000000001.checkpoint.0000000004.0000000003.parquet", logPath{}},
		{"_delta_log/00000000000000000015.00000000000000000006.compacted.json", logPath{}},
		{"_delta_log/0000000000000000001.json", logPath{}},
		{"_delta_log/0000000000000000001x.json", logPath{}},
		{"_delta_log/00000000000000000001.json.tmp", logPath{}},
		{"_delta_log/_sidecars/00000000000000000008.checkpoint.0000000001.0000000001." + u + ".parquet", logPath{}},
		{"_delta_log/_staged_commits/00000000000000000002.not-a-uuid.json", logPath{}},
		{"_delta_log/00000000000000000008.checkpoint.nope.json", logPath{}},
		{"data/00000000000000000001.json", logPath{}},
		{"_delta_log/_commits/", logPath{}},
	}
	for _, tt := range tests {
		got := parseLogPath(tt.key)
		tt.want.Key, tt.want.Size = tt.key, -1
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseLogPath(%q) (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestParseLastCheckpoint(t *testing.T) {
	tests := []struct {
		in   string
		want lastCheckpoint
		ok   bool
	}{
		{`{"version":10,"size":13}`, lastCheckpoint{Version: 10}, true},
		{`{"version": 1, "size": 12, "parts": 2, "sizeInBytes": 30499, "checkpointSchema": {"type":"struct"}}`, lastCheckpoint{Version: 1, Parts: 2}, true},
		{`{"size": 6, "size_in_bytes": 23521, "version": 1}`, lastCheckpoint{Version: 1}, true},
		{`{"version": 0, "size": 0}`, lastCheckpoint{}, true},
		{"", lastCheckpoint{}, false},
		{"   \n", lastCheckpoint{}, false},
		{`{"version": -1}`, lastCheckpoint{}, false},
		{`{"version": "10"}`, lastCheckpoint{Version: 10}, true}, // lenient: it is only a hint
		{`{"size": 3}`, lastCheckpoint{}, false},
		{`{"version": 10`, lastCheckpoint{}, false},
		{`{"version": 1.5}`, lastCheckpoint{}, false},
		{`[1]`, lastCheckpoint{}, false},
	}
	for _, tt := range tests {
		got, ok := parseLastCheckpoint([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseLastCheckpoint(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
