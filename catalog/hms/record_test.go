package hms

import (
	"maps"
	"runtime"
	"strconv"
	"strings"
	"testing"

	hm "github.com/beltran/gohive/hive_metastore"
	"github.com/google/go-cmp/cmp"
)

func longSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"c` + strconv.Itoa(i) + `","type":"long","nullable":true,"metadata":{}}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestSplitSchema(t *testing.T) {
	for _, n := range []int{10, 3990, 4001, 9000, 12001} {
		s := longSchema(n)
		p := SplitSchema(s)
		got, ok, err := ReadSchema(p)
		if err != nil || !ok || got != s {
			t.Fatalf("len %d: round trip = %v, %v (equal %v)", len(s), ok, err, got == s)
		}
		if len(s) <= SchemaPartLength {
			if len(p) != 1 || p[KeySchema] != s {
				t.Errorf("len %d: want the single key, got %d keys", len(s), len(p))
			}
			continue
		}
		parts, _ := strconv.Atoi(p[KeySchemaNumParts])
		if _, single := p[KeySchema]; single || parts != (len(s)+SchemaPartLength-1)/SchemaPartLength {
			t.Errorf("len %d: numParts %d, single key present %v", len(s), parts, single)
		}
		for i := range parts {
			if l := len(p[KeySchemaPart+strconv.Itoa(i)]); l > SchemaPartLength || (i < parts-1 && l != SchemaPartLength) {
				t.Errorf("len %d: part %d has %d chars", len(s), i, l)
			}
		}
	}
	// Exactly at the threshold: one key (Spark splits only above it).
	s := strings.Repeat("x", SchemaPartLength)
	if p := SplitSchema(s); len(p) != 1 {
		t.Errorf("4000 chars: %d keys, want 1", len(p))
	}
	// Java counts UTF-16 units; a surrogate pair is never split.
	s = strings.Repeat("a", SchemaPartLength-1) + "😀" + "b"
	p := SplitSchema(s)
	if p[KeySchemaNumParts] != "2" || p[KeySchemaPart+"0"] != strings.Repeat("a", SchemaPartLength-1) || p[KeySchemaPart+"1"] != "😀b" {
		t.Errorf("surrogate pair split: %q / %q", p[KeySchemaPart+"0"][SchemaPartLength-3:], p[KeySchemaPart+"1"])
	}
}

func TestReadSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{KeySchemaNumParts: "2", KeySchemaPart + "0": "{"}, "spark.sql.sources.schema.part.1 is missing"},
		{map[string]string{KeySchemaNumParts: "x"}, `spark.sql.sources.schema.numParts = "x"`},
		{map[string]string{KeyNumPartCols: "1"}, "spark.sql.sources.schema.partCol.0 is missing"},
	} {
		tbl := sparkRegistered("db", "t", "file:/w", "file:/w/t")
		delete(tbl.Parameters, KeySchema)
		maps.Copy(tbl.Parameters, tc.params)
		_, err := ReadRecord(tbl)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hive.db.t") {
			t.Errorf("ReadRecord(%v) = %v, want an error naming hive.db.t and %q", tc.params, err, tc.want)
		}
	}
}

// TestApply: owned keys follow the log, everything else stays as stored.
func TestApply(t *testing.T) {
	stored := sparkRegistered("db", "t", "file:/w", "file:/w/t")
	maps.Copy(stored.Parameters, map[string]string{
		"transient_lastDdlTime": "100", "bucketing_version": "2", "owner_team": "x",
		KeySchemaNumParts: "3", KeySchemaPart + "0": "a", KeySchemaPart + "1": "b", KeySchemaPart + "2": "c",
		KeyNumPartCols: "2", KeyPartCol + "0": "dt", KeyPartCol + "1": "h",
		"spark.sql.sources.schema.numBuckets": "4",
		"delta.appendOnly":                    "true", "delta.catalogUpdateError": "schema too long",
		"team.removed": "y", KeySyncedProperties: `["team.removed"]`,
		KeyTrinoVersion: "3", KeyTrinoSchema: "[...]", "comment": "old",
	})
	delete(stored.Parameters, KeySchema)
	before := cloneTable(stored)
	d := Desired{
		Schema:           `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{"id"},
		Properties:       map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "2", "team.kept": "z"},
		Version:          4, CommitTimestamp: 1796152896367,
	}
	next, err := Apply(stored, d)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		// never deltasync's: as stored
		"EXTERNAL": "TRUE", "spark.sql.create.version": "4.2.0", "spark.sql.partitionProvider": "catalog",
		"transient_lastDdlTime": "100", "bucketing_version": "2", "owner_team": "x",
		"spark.sql.sources.schema.numBuckets": "4",
		// deltasync's
		KeyProvider: "delta", KeySchema: d.Schema, KeyNumPartCols: "1", KeyPartCol + "0": "id",
		"delta.minReaderVersion": "1", "delta.minWriterVersion": "2", "team.kept": "z",
		KeySyncedProperties: `["team.kept"]`, KeyLastUpdateVersion: "4", KeyLastCommitTimestamp: "1796152896367",
	}
	if diff := cmp.Diff(want, next.Parameters); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, stored); diff != "" {
		t.Errorf("Apply changed the stored table:\n%s", diff)
	}
	if next.Sd.Location != stored.Sd.Location || next.Owner != stored.Owner || !IsPlaceholder(next.Sd.Cols) ||
		!maps.Equal(next.Sd.SerdeInfo.Parameters, stored.Sd.SerdeInfo.Parameters) {
		t.Errorf("storage, owner or columns changed: %+v", next.Sd)
	}
	// Trino's cache stays when it is for the version written.
	stored.Parameters[KeyTrinoVersion] = "4"
	next, _ = Apply(stored, d)
	if next.Parameters[KeyTrinoVersion] != "4" || next.Parameters[KeyTrinoSchema] != "[...]" {
		t.Errorf("a current Trino cache was removed: %v", next.Parameters)
	}
	// Read back: the record is what was applied.
	r, err := ReadRecord(next)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != d.Schema || r.Version != 4 || r.CommitTimestamp != 1796152896367 || r.Location != "file:/w/t" ||
		!cmp.Equal(r.PartitionColumns, []string{"id"}) || !cmp.Equal(r.Properties, d.Properties) || r.HasComment {
		t.Errorf("ReadRecord after Apply = %+v", r)
	}
	// A log property spelled like a metastore key cannot be synced.
	for _, k := range []string{"comment", "spark.sql.sources.provider", "numFiles", "delta.lastUpdateVersion"} {
		if _, err := Apply(stored, Desired{Schema: d.Schema, Properties: map[string]string{k: "v"}}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("Apply with log property %q: %v", k, err)
		}
	}
}

func TestHiveColumns(t *testing.T) {
	schema := `{"type":"struct","fields":[
		{"name":"id","type":"long","nullable":false,"metadata":{"comment":"key"}},
		{"name":"n","type":"integer","nullable":true,"metadata":{}},
		{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
		{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
		{"name":"m","type":{"type":"map","keyType":"string","valueType":"short","valueContainsNull":true},"nullable":true,"metadata":{}},
		{"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"byte","nullable":true,"metadata":{}},{"name":"b","type":{"type":"array","elementType":"date","containsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
		{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]}`
	got, err := HiveColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	want := []*hm.FieldSchema{
		{Name: "id", Type: "bigint", Comment: "key"}, {Name: "n", Type: "int"}, {Name: "amount", Type: "decimal(10,2)"},
		{Name: "tags", Type: "array<string>"}, {Name: "m", Type: "map<string,smallint>"},
		{Name: "s", Type: "struct<a:tinyint,b:array<date>>"}, {Name: "ts", Type: "timestamp"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = HiveColumns(`{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]}`)
	if err == nil || !strings.Contains(err.Error(), `field "t"`) || !strings.Contains(err.Error(), "timestamp_ntz") {
		t.Errorf("timestamp_ntz: %v, want an error naming the field and type", err)
	}
}

func TestNewExternalTable(t *testing.T) {
	tbl, err := NewExternalTable("db", "t", Desired{Location: "s3://b/t", Schema: `{"type":"struct","fields":[]}`, Version: 0, CommitTimestamp: 5})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecord(tbl)
	if err != nil || !IsDelta(tbl) || r.Location != "s3://b/t" || tbl.TableType != "EXTERNAL_TABLE" || tbl.Parameters["EXTERNAL"] != "TRUE" || !IsPlaceholder(tbl.Sd.Cols) {
		t.Errorf("NewExternalTable = %+v, %v", tbl, err)
	}
	if _, err := NewExternalTable("db", "t", Desired{}); err == nil {
		t.Error("no location: want an error")
	}
}

// A record's part counts and parts are the metastore's to spell: a count
// the parameters cannot hold, or parts joining to more than
// MaxSchemaLength, is refused naming the key before anything that size is
// allocated.
func TestReadSchemaBounds(t *testing.T) {
	huge := strings.Repeat("x", MaxSchemaLength/2+1)
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{KeySchemaNumParts: "1000000000"}, `spark.sql.sources.schema.numParts = "1000000000"`},
		{map[string]string{KeySchemaNumParts: "99999", KeySchemaPart + "0": "{"}, "spark.sql.sources.schema.numParts = 99999 but the table has only"},
		{map[string]string{KeyNumPartCols: "1000000000"}, `spark.sql.sources.schema.numPartCols = "1000000000"`},
		{map[string]string{KeyNumPartCols: "99999"}, "spark.sql.sources.schema.numPartCols = 99999 but the table has only"},
		{map[string]string{KeySchemaNumParts: "2", KeySchemaPart + "0": huge, KeySchemaPart + "1": huge}, "parts join to more than"},
	} {
		tbl := sparkRegistered("db", "t", "file:/w", "file:/w/t")
		delete(tbl.Parameters, KeySchema)
		maps.Copy(tbl.Parameters, tc.params)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadRecord(tbl)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hive.db.t") {
			t.Errorf("ReadRecord(%.80v) = %v, want an error naming hive.db.t and %q", tc.params, err, tc.want)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
			t.Errorf("ReadRecord(%.80v) allocated %d bytes before refusing", tc.params, got)
		}
	}
}
