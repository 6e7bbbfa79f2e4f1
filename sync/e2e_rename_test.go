package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// commitJSON appends commit version v to the log in dir, as Spark writes one.
func commitJSON(t *testing.T, dir string, v int64, op string, actions ...map[string]any) {
	t.Helper()
	now := time.Now().UnixMilli()
	var buf bytes.Buffer
	for _, a := range append([]map[string]any{{"commitInfo": map[string]any{"timestamp": now, "operation": op, "engineInfo": "deltasync-e2e (as Spark)"}}}, actions...) {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mappedSchema is schema with column mapping ids and physical names (the
// logical names, as Spark's upgrade to mode name keeps them), the column
// rename renamed.
func mappedSchema(t *testing.T, schema string, rename map[string]string) (string, int) {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	fields := s["fields"].([]any)
	for i, f := range fields {
		f := f.(map[string]any)
		md, _ := f["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		name := f["name"].(string)
		md["delta.columnMapping.id"] = i + 1
		md["delta.columnMapping.physicalName"] = name
		f["metadata"] = md
		if to, ok := rename[name]; ok {
			f["name"] = to
		}
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), len(fields)
}

// TestDeltaRSColumnRename: a rename on a column-mapped table. delta-rs
// writes no column-mapped tables, nor renames, so its table gets the two
// commits Spark writes appended as JSON: ALTER TABLE SET TBLPROPERTIES
// delta.columnMapping.mode=name (protocol 2/5, ids and physical names),
// then RENAME COLUMN name TO label (the id and physical name kept). Under
// hold the table is held with the rename named, its record unchanged and
// deltasync_table_held set; under sync the record equals the log.
func TestDeltaRSColumnRename(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "renamed")
	evolve(t, py, dir, "create")
	snap := snapshot(t, dir)
	md := snap.Metadata
	conf := map[string]string{}
	for k, v := range md.Configuration {
		conf[k] = v
	}
	conf["delta.columnMapping.mode"] = "name"
	schema, n := mappedSchema(t, md.SchemaString, nil)
	conf["delta.columnMapping.maxColumnId"] = fmt.Sprint(n)
	meta := func(schema string) map[string]any {
		return map[string]any{"metaData": deltalog.Metadata{ID: md.ID, Name: md.Name, Description: md.Description, Format: md.Format,
			SchemaString: schema, PartitionColumns: md.PartitionColumns, Configuration: conf, CreatedTime: md.CreatedTime}}
	}
	commitJSON(t, dir, snap.Version+1, "SET TBLPROPERTIES",
		map[string]any{"protocol": deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}}, meta(schema))
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), e.name("renamed"), "file://"+dir); err != nil {
		t.Fatalf("register: %v", err)
	}
	e.matchesLog("renamed", dir)
	renamed, _ := mappedSchema(t, md.SchemaString, map[string]string{"name": "label"})
	commitJSON(t, dir, snap.Version+2, "RENAME COLUMN", meta(renamed))

	full := e.name("renamed").String()
	before := e.record("renamed")
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	rep := e.reconciler([]sync.Rule{{Include: []string{full}, OnDestructive: sync.OnDestructiveHold}},
		func(o *sync.Options) { o.Metrics = m }).Sync(ctx)
	if len(rep.Results) != 1 || rep.Results[0].Held != sync.HeldDestructive {
		t.Fatalf("rename under hold: %s", reportText(rep))
	}
	t.Logf("held: %s", rep.Results[0].Reason)
	if !strings.Contains(rep.Results[0].Reason, "name") || !strings.Contains(rep.Results[0].Reason, "label") {
		t.Errorf("the held reason does not name the rename: %s", rep.Results[0].Reason)
	}
	if got := e.record("renamed"); got.Etag != before.Etag {
		t.Errorf("held record changed: etag %s -> %s", before.Etag, got.Etag)
	}
	if got := heldSeries(t, reg); got[full] != 1 {
		t.Errorf("deltasync_table_held = %v, want %s 1", got, full)
	}
	rep = e.reconciler([]sync.Rule{{Include: []string{full}}}).Sync(ctx)
	if rep.Results[0].Outcome != sync.OutcomeSynced {
		t.Fatalf("rename under sync: %s", reportText(rep))
	}
	e.matchesLog("renamed", dir)
}
