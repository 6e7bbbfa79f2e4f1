package plan

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
)

const testSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1","comment":"key"}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}`

func testLog() LogState {
	return LogState{
		Version: 7, CommitTimestamp: 1700000000000,
		Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors"},
			WriterFeatures: []string{"columnMapping", "deletionVectors", "appendOnly", "clustering", "domainMetadata"}},
		SchemaString:     testSchema,
		PartitionColumns: []string{"part"},
		Configuration:    map[string]string{"delta.columnMapping.mode": "name", "owner.team": "sales"},
		Description:      "orders",
		Clustering:       [][]string{{"col-1"}},
		Location:         "/data/orders/",
	}
}

// faithful builds the record a spec-faithful server holds after registering
// log and recording its version.
func faithful(t *testing.T, log LogState) Record {
	t.Helper()
	cols, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	props := maps.Clone(log.Configuration)
	maps.Copy(props, catalog.ProtocolProperties(log.Protocol))
	if log.Clustering != nil {
		props["clusteringColumns"] = `[["col-1"]]`
	}
	props["delta.lastUpdateVersion"] = "7"
	props["delta.lastCommitTimestamp"] = "1700000000000"
	props["delta.rowTracking.rowIdHighWaterMark"] = "99"
	v := log.Version
	proto := log.Protocol
	proto.ReaderFeatures, proto.WriterFeatures = slices.Clone(proto.ReaderFeatures), slices.Clone(proto.WriterFeatures)
	return Record{
		Name: catalog.TableName{Catalog: "main", Schema: "sales", Table: "orders"},
		Etag: "e1", Type: "EXTERNAL", ID: "u1", Location: "file:///data/orders",
		Columns: cols, PartitionColumns: log.PartitionColumns, Properties: props, LastCommitVersion: &v,
		Protocol: &proto, Clustering: slices.Clone(log.Clustering),
		Comment:         log.Description,
		StorageLocation: "file:///data/orders",
	}
}

func TestDiffInSync(t *testing.T) {
	log := testLog()
	p := Diff(log, faithful(t, log), DiffOptions{})
	if !p.Empty() {
		t.Fatalf("faithful record shows drift: %+v", p)
	}
	if e := p.Edit(log); e != nil {
		t.Fatalf("Edit of an empty plan = %+v", e)
	}
}

func TestDiffDrift(t *testing.T) {
	v := func(n int64) *int64 { return &n }
	tests := []struct {
		name    string
		mutate  func(*Record)
		opts    DiffOptions
		kinds   []DriftKind
		actions []string
	}{
		{"comment", func(r *Record) { r.Comment = "" }, DiffOptions{},
			[]DriftKind{KindComment}, []string{"set-table-comment", "update-metadata-snapshot-version"}},
		{"column added in log", func(r *Record) { r.Columns.Fields = r.Columns.Fields[:2] },
			DiffOptions{}, []DriftKind{KindSchema}, []string{"set-columns", "update-metadata-snapshot-version"}},
		{"nullability", func(r *Record) { r.Columns.Fields[1].Nullable = false },
			DiffOptions{}, []DriftKind{KindSchema}, []string{"set-columns", "update-metadata-snapshot-version"}},
		{"field metadata", func(r *Record) { r.Columns.Fields[0].Metadata = map[string]any{} },
			DiffOptions{}, []DriftKind{KindSchema}, []string{"set-columns", "update-metadata-snapshot-version"}},
		{"partitioning", func(r *Record) { r.PartitionColumns = nil }, DiffOptions{},
			[]DriftKind{KindPartitioning}, []string{"set-partition-columns", "update-metadata-snapshot-version"}},
		{"property changed and extra", func(r *Record) {
			r.Properties["owner.team"] = "hr"
			r.Properties["stale"] = "x"
		}, DiffOptions{}, []DriftKind{KindProperties},
			[]string{"set-properties", "remove-properties", "update-metadata-snapshot-version"}},
		{"ignored property", func(r *Record) { r.Properties["spark.sql.x"] = "1" },
			DiffOptions{IgnoreProperties: []string{"spark.*"}}, nil, nil},
		{"derived keys never compared", func(r *Record) {
			r.Properties["delta.rowTracking.rowIdHighWaterMark"] = "1000"
			r.Properties["delta.lastCommitTimestamp"] = "1"
		}, DiffOptions{}, nil, nil},
		{"protocol feature missing", func(r *Record) {
			r.Protocol.WriterFeatures = slices.DeleteFunc(r.Protocol.WriterFeatures, func(f string) bool { return f == "appendOnly" })
		}, DiffOptions{}, []DriftKind{KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}},
		{"protocol version", func(r *Record) { r.Protocol.MinReaderVersion = 2 },
			DiffOptions{}, []DriftKind{KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}},
		{"no readable protocol in catalog", func(r *Record) { r.Protocol = nil },
			DiffOptions{}, []DriftKind{KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}},
		{"clustering gone from catalog", func(r *Record) { r.Clustering = nil },
			DiffOptions{}, []DriftKind{KindClustering}, []string{"set-domain-metadata", "update-metadata-snapshot-version"}},
		{"location", func(r *Record) { r.Location = "s3://b/orders" }, DiffOptions{},
			[]DriftKind{KindLocation}, []string{"update-metadata-snapshot-version"}},
		{"watermark behind", func(r *Record) { r.LastCommitVersion = v(3) }, DiffOptions{},
			[]DriftKind{KindVersion}, []string{"update-metadata-snapshot-version"}},
		{"watermark absent", func(r *Record) { r.LastCommitVersion = nil }, DiffOptions{},
			[]DriftKind{KindVersion}, []string{"update-metadata-snapshot-version"}},
		{"managed: no watermark compare", func(r *Record) {
			r.Type = "MANAGED"
			r.LastCommitVersion = v(0)
		}, DiffOptions{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := testLog()
			rec := faithful(t, log)
			tt.mutate(&rec)
			p := Diff(log, rec, tt.opts)
			if diff := cmp.Diff(tt.kinds, p.Kinds()); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.actions, nilIfEmpty(p.Edit(log).Actions())); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			// Pure and deterministic: the same inputs give the same plan.
			if diff := cmp.Diff(p, Diff(log, rec, tt.opts)); diff != "" {
				t.Errorf("Diff not deterministic:\n%s", diff)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDiffUpdatesCarryLogValues(t *testing.T) {
	log := testLog()
	rec := faithful(t, log)
	rec.Properties["owner.team"] = "hr"
	rec.Properties["stale"] = "x"
	log.Clustering = nil
	rec.Clustering = [][]string{{"a"}}
	got := Diff(log, rec, DiffOptions{}).Edit(log)
	want := &catalog.Edit{
		SetProperties:    map[string]string{"owner.team": "sales"},
		RemoveProperties: []string{"stale"},
		SetClustering:    true,
		Version:          7, CommitTimestampMs: 1700000000000,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
}

func TestDiffUnsupportedAndProblems(t *testing.T) {
	log := testLog()
	rec := faithful(t, log)
	log.SchemaString = `{"type":"struct","fields":[{"name":"v","type":"void","nullable":true,"metadata":{}}]}`
	p := Diff(log, rec, DiffOptions{})
	if diff := cmp.Diff([]string{"v: void"}, p.Unsupported); diff != "" {
		t.Errorf("unsupported (-want +got):\n%s", diff)
	}
	log.SchemaString = `{not json`
	if p := Diff(log, rec, DiffOptions{}); len(p.Problems) == 0 || p.Empty() {
		t.Errorf("bad schemaString: want a problem, got %+v", p)
	}
}

// TestDiffSchemaAsTheCatalogWritesIt: a log schemaString that is the
// catalog's columns written in the log's form (the usual in-sync table) is
// compared without parsing it, with the same verdict as the parse gives: no
// schema drift, and the types the catalog cannot store still reported.
func TestDiffSchemaAsTheCatalogWritesIt(t *testing.T) {
	for _, schema := range []string{
		testSchema, // metadata keys unsorted: not the catalog's spelling, parsed
		`{"type":"struct","fields":[{"name":"v","type":"void","nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":"decimal(10,2)","valueContainsNull":true},"nullable":false,"metadata":{"comment":"x","delta.columnMapping.id":3}}]}`,
	} {
		cols, err := catalog.ColumnsFromSchemaString(schema)
		if err != nil {
			t.Fatal(err)
		}
		canonical, err := cols.SchemaString()
		if err != nil {
			t.Fatal(err)
		}
		wantUnsupported := catalog.UnsupportedTypes(cols)
		for _, s := range []string{schema, canonical} {
			change, unsupported, problems := diffSchema(&LogState{SchemaString: s}, recordOf(cols), nil)
			if change != nil || problems != nil {
				t.Errorf("%s: change %+v, problems %v; want none", s, change, problems)
			}
			if diff := cmp.Diff(wantUnsupported, unsupported); diff != "" {
				t.Errorf("%s: unsupported (-parsed +got):\n%s", s, diff)
			}
		}
		// A catalog that differs is still told apart.
		other := cols
		other.Fields = append([]catalog.StructField(nil), cols.Fields...)
		other.Fields[0].Nullable = !other.Fields[0].Nullable
		if change, _, _ := diffSchema(&LogState{SchemaString: canonical}, recordOf(other), nil); change == nil {
			t.Errorf("%s: a catalog column with another nullability shows no schema change", canonical)
		}
	}
}

// recordOf is a catalog record with columns cols.
func recordOf(cols catalog.StructType) *Record {
	return &Record{Columns: cols}
}
