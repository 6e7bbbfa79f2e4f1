package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deltasync/deltasync/deltalog"
)

// The demo builds its sample tables itself, so `deltasync demo` works from a
// clean clone with no test data and no outside service. The logs it writes
// are ordinary Delta logs (protocol, metaData, add and commitInfo actions in
// newline-delimited JSON commits), the same shape Spark and delta-rs write.

// demoField is one column of a demo table's schema.
type demoField struct {
	Name     string         `json:"name"`
	Type     string         `json:"type"`
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

func demoSchema(fields ...demoField) string {
	for i := range fields {
		if fields[i].Metadata == nil {
			fields[i].Metadata = map[string]any{}
		}
	}
	b, err := json.Marshal(map[string]any{"type": "struct", "fields": fields})
	if err != nil {
		panic(err) // only fixed, valid input reaches here
	}
	return string(b)
}

func col(name, typ string) demoField { return demoField{Name: name, Type: typ, Nullable: true} }

// demoLog writes the commits of one table under dir/_delta_log.
type demoLog struct {
	dir     string
	version int64
	clock   time.Time
	meta    deltalog.Metadata // the latest metaData written
}

func newDemoLog(dir string, start time.Time) (*demoLog, error) {
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		return nil, err
	}
	return &demoLog{dir: dir, version: -1, clock: start}, nil
}

// commit appends the next version with the given actions (each a map with a
// single action key, e.g. {"metaData": ...}) plus a commitInfo.
func (l *demoLog) commit(operation string, actions ...map[string]any) error {
	l.version++
	l.clock = l.clock.Add(time.Minute)
	ts := l.clock.UnixMilli()
	actions = append([]map[string]any{{"commitInfo": map[string]any{
		"timestamp": ts, "operation": operation, "engineInfo": "deltasync-demo",
	}}}, actions...)
	var buf []byte
	for _, a := range actions {
		line, err := json.Marshal(a)
		if err != nil {
			return err
		}
		buf = append(append(buf, line...), '\n')
	}
	// Write aside and rename, as writers publish a commit: a daemon reading
	// the log meanwhile (demo --serve) never sees half a commit.
	name := filepath.Join(l.dir, "_delta_log", fmt.Sprintf("%020d.json", l.version))
	tmp := filepath.Join(l.dir, "_delta_log", fmt.Sprintf(".%020d.json.tmp", l.version))
	if err := os.WriteFile(tmp, buf, 0o644); err != nil {
		return err
	}
	if err := os.Chtimes(tmp, l.clock, l.clock); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// create writes version 0 with the protocol and metadata; format,
// partition columns and creation time get their usual defaults.
func (l *demoLog) create(p deltalog.Protocol, m deltalog.Metadata) error {
	m.Format = deltalog.Format{Provider: "parquet", Options: map[string]string{}}
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	created := l.clock.UnixMilli()
	m.CreatedTime = &created
	l.meta = m
	return l.commit("CREATE TABLE", map[string]any{"protocol": p}, map[string]any{"metaData": m})
}

// changeMetadata commits a new metaData action (plus other actions), as a
// writer does for schema evolution or SET TBLPROPERTIES.
func (l *demoLog) changeMetadata(operation string, m deltalog.Metadata, actions ...map[string]any) error {
	l.meta = m
	return l.commit(operation, append([]map[string]any{{"metaData": m}}, actions...)...)
}

// addFile is an add action for one data file (the demo writes no data files:
// deltasync reads only the log).
func addFile(path string, partition map[string]string, ts int64) map[string]any {
	if partition == nil {
		partition = map[string]string{}
	}
	return map[string]any{"add": map[string]any{
		"path": path, "partitionValues": partition, "size": 1024,
		"modificationTime": ts, "dataChange": true,
		"stats": `{"numRecords":10}`,
	}}
}
