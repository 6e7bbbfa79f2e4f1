package sync

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/plan"
)

// wideLog is a table with n columns (nested every tenth) and n properties.
func wideLog(n int) plan.LogState {
	type field struct {
		Name     string         `json:"name"`
		Type     any            `json:"type"`
		Nullable bool           `json:"nullable"`
		Metadata map[string]any `json:"metadata"`
	}
	fields := make([]field, n)
	conf := map[string]string{}
	for i := range fields {
		var typ any = "long"
		if i%10 == 0 {
			typ = map[string]any{"type": "array", "elementType": map[string]any{"type": "struct", "fields": []field{
				{Name: "x", Type: "string", Nullable: true, Metadata: map[string]any{}}}}, "containsNull": true}
		}
		fields[i] = field{Name: fmt.Sprintf("c%d", i), Type: typ, Nullable: true,
			Metadata: map[string]any{"delta.columnMapping.id": i + 1, "delta.columnMapping.physicalName": fmt.Sprintf("col-%d", i)}}
		conf[fmt.Sprintf("user.key%d", i)] = "v"
	}
	b, _ := json.Marshal(map[string]any{"type": "struct", "fields": fields})
	return plan.LogState{Version: 1000, CommitTimestamp: 1, SchemaString: string(b), Configuration: conf,
		Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
			WriterFeatures: []string{"columnMapping", "domainMetadata"}}, Location: "s3://b/t"}
}

func recordFor(b *testing.B, log plan.LogState) plan.Record {
	cols, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		b.Fatal(err)
	}
	props := maps.Clone(log.Configuration)
	maps.Copy(props, catalog.ProtocolProperties(log.Protocol))
	v := log.Version
	p := log.Protocol
	return plan.Record{Type: "EXTERNAL", Location: log.Location, Columns: cols, Properties: props, LastCommitVersion: &v, Protocol: &p}
}

// BenchmarkDiff measures one in-sync comparison of wide tables (the common
// case every cycle for every table).
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n, "cols"), func(b *testing.B) {
			log := wideLog(n)
			rec := recordFor(b, log)
			b.ReportAllocs()
			for b.Loop() {
				if p := plan.Diff(log, rec, plan.DiffOptions{IgnoreProperties: []string{"spark.*"}}); !p.Empty() {
					b.Fatal("drift")
				}
			}
		})
	}
}

// BenchmarkSelect measures selecting and sharding 10,000 listed tables.
func BenchmarkSelect(b *testing.B) {
	sel, err := NewSelector([]Rule{
		{Include: []string{"main.sales.*", "!*.tmp_*"}, Exclude: []string{"*.*.old_*"}},
		{Include: []string{"main.*.*"}, Exclude: []string{"main.secret.*", "*.*.old_*"}, Mode: ModeWarn},
	})
	if err != nil {
		b.Fatal(err)
	}
	names := make([][3]string, 10000)
	for i := range names {
		names[i] = [3]string{"main", fmt.Sprintf("schema%d", i%50), fmt.Sprintf("table_%d", i)}
	}
	shard := Shard{Index: 1, Count: 4}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			if _, ok := sel.Match(n[0], n[1], n[2]); ok {
				shard.Owns(n[0] + "." + n[1] + "." + n[2])
			}
		}
	}
}
