package kindtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/deltalog"
)

// Schema is the schema of the suite's tables: one nullable long, id.
const Schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`

// Retention is a log property every suite table starts with.
const Retention = "delta.logRetentionDuration"

// startTimestamp is the commitInfo timestamp of version 0 (ms); version v
// is committed v seconds later.
const startTimestamp = 1_800_000_000_000

// Commit writes version v of the log at dir: commitInfo, the protocol
// (1, 2) at version 0, and a metaData action with schema and conf (none
// when schema is ""): a commit an engine leaves, without data files.
func Commit(t testing.TB, dir string, v int64, schema string, conf map[string]string) {
	t.Helper()
	actions := []map[string]any{{"commitInfo": map[string]any{"timestamp": startTimestamp + 1000*v, "operation": "CONTRACT"}}}
	if v == 0 {
		actions = append(actions, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}})
	}
	if schema != "" {
		if conf == nil {
			conf = map[string]string{}
		}
		actions = append(actions, map[string]any{"metaData": map[string]any{
			"id": "kindtest-" + filepath.Base(dir), "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
			"schemaString": schema, "partitionColumns": []string{}, "configuration": conf, "createdTime": startTimestamp,
		}})
	}
	var b []byte
	for _, a := range actions {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, fmt.Sprintf("%020d.json", v)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Latest is the latest version of the log at dir and its commit timestamp.
func Latest(t testing.TB, dir string) (version, timestamp int64) {
	t.Helper()
	ctx := context.Background()
	tbl, err := deltalog.Open(ctx, "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	s, err := tbl.Load(ctx, deltalog.LoadOptions{})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return s.Version, s.CommitTimestamp
}

// readAudit reads an audit trail's records.
func readAudit(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
