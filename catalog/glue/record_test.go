package glue

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/google/go-cmp/cmp"
)

func TestReadRecordShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table *types.Table
		want  Record
	}{
		{"spark", sparkTable(), Record{
			Name: "lake.events", Shape: ShapeSpark, Location: "s3://lake/events",
			Schema: logSchema, HasSchema: true, PartitionColumns: []string{"dt"},
			Columns:       []Column{{Name: "col", Type: "array<string>", Comment: "from deserializer"}},
			PartitionKeys: []Column{},
			Properties:    map[string]string{"delta.appendOnly": "true"},
			Version:       2, CommitTimestamp: 1700000000000, VersionID: "3",
		}},
		{"athena", athenaTable(), Record{
			Name: "lake.clicks", Shape: ShapeAthena, Location: "s3://lake/clicks",
			PartitionColumns: []string{"dt"},
			Columns:          []Column{{Name: "id", Type: "bigint"}, {Name: "name", Type: "string"}},
			PartitionKeys:    []Column{{Name: "dt", Type: "date"}},
			Properties:       map[string]string{}, Version: -1, CommitTimestamp: -1, VersionID: "1",
		}},
		{"crawler native", crawlerTable(), Record{
			Name: "lake.orders", Shape: ShapeNative, Location: "s3://lake/orders",
			Schema: logSchema, HasSchema: true, PartitionColumns: []string{"dt"},
			Columns:       []Column{{Name: "id", Type: "bigint", Comment: "the key"}, {Name: "name", Type: "string"}},
			PartitionKeys: []Column{{Name: "dt", Type: "date"}},
			Properties:    map[string]string{}, Version: 4, CommitTimestamp: 1700000000004, VersionID: "12",
		}},
		{"trino", trinoTable(), Record{
			Name: "lake.trips", Shape: ShapeSpark, Location: "s3://lake/trips",
			Columns:       []Column{{Name: "col", Type: "array<varchar>"}},
			PartitionKeys: []Column{},
			Comment:       "trips", HasComment: true,
			Properties: map[string]string{}, Version: -1, CommitTimestamp: -1, VersionID: "5", TrinoVersion: "9",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if why := WhyNotDelta(tc.table); why != "" {
				t.Fatalf("WhyNotDelta = %q, want a Delta table", why)
			}
			got, err := ReadRecord(tc.table)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ReadRecord (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadRecordSyncedProperties(t *testing.T) {
	tb := sparkTable()
	tb.Parameters["quality"] = "gold"
	tb.Parameters[KeySyncedProperties] = `["quality"]`
	r, err := ReadRecord(tb)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{"delta.appendOnly": "true", "quality": "gold"}, r.Properties); d != "" {
		t.Errorf("Properties (-want +got):\n%s", d)
	}
}

func TestReadRecordBadValuesNameTableAndKey(t *testing.T) {
	for _, tc := range []struct {
		key, value, want string
	}{
		{KeyLastUpdateVersion, "x", "delta.lastUpdateVersion"},
		{KeyLastCommitTimestamp, "-4", "delta.lastCommitTimestamp"},
		{KeySchemaNumParts, "3", "spark.sql.sources.schema.part.0 is missing"},
		{KeyNumPartCols, "2", "spark.sql.sources.schema.partCol.1 is missing"},
		{KeySyncedProperties, "quality", "deltasync.syncedProperties"},
	} {
		tb := sparkTable()
		if tc.key == KeySchemaNumParts {
			delete(tb.Parameters, KeySchema)
		}
		tb.Parameters[tc.key] = tc.value
		_, err := ReadRecord(tb)
		if err == nil || !strings.Contains(err.Error(), "lake.events") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: err = %v, want one naming lake.events and %q", tc.key, tc.value, err, tc.want)
		}
	}
}

func TestWhyNotDelta(t *testing.T) {
	plain := func(edit func(*types.Table)) *types.Table {
		tb := athenaTable()
		delete(tb.Parameters, KeyTableType)
		edit(tb)
		return tb
	}
	for _, tc := range []struct {
		name  string
		table *types.Table
		want  string
	}{
		{"parquet", plain(func(*types.Table) {}), "neither"},
		{"iceberg", plain(func(tb *types.Table) { tb.Parameters[KeyTableType] = "ICEBERG" }), "Iceberg"},
		{"symlink", plain(func(tb *types.Table) {
			tb.StorageDescriptor.InputFormat = aws.String("org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat")
		}), "symlink-manifest"},
		{"view", plain(func(tb *types.Table) { tb.TableType = aws.String("VIRTUAL_VIEW"); tb.Parameters[KeyProvider] = "delta" }), "view"},
		{"resource link", plain(func(tb *types.Table) {
			tb.TargetTable = &types.TableIdentifier{DatabaseName: aws.String("src"), Name: aws.String("t")}
		}), "resource link to src.t"},
		{"federated", plain(func(tb *types.Table) { tb.FederatedTable = &types.FederatedTable{} }), "federated"},
		{"athena lower-case", plain(func(tb *types.Table) { tb.Parameters[KeyTableType] = "delta" }), ""},
	} {
		got := WhyNotDelta(tc.table)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: WhyNotDelta = %q, want %q", tc.name, got, tc.want)
		}
		if IsDelta(tc.table) != (got == "") {
			t.Errorf("%s: IsDelta disagrees with WhyNotDelta", tc.name)
		}
	}
}

// A record's shape follows its writer's marks: an Athena record that lost
// its columns stays Athena's (Apply gives it real columns, not Spark's
// keys); a record with Spark's marks and no columns is Spark's.
func TestShapeOfWithoutColumns(t *testing.T) {
	athena := athenaTable()
	athena.StorageDescriptor.Columns = nil
	spark := sparkTable()
	spark.StorageDescriptor = nil
	for _, tc := range []struct {
		table *types.Table
		want  Shape
	}{{athena, ShapeAthena}, {spark, ShapeSpark}} {
		if got := ShapeOf(tc.table); got != tc.want {
			t.Errorf("%s: shape %v, want %v", aws.ToString(tc.table.Name), got, tc.want)
		}
		in, err := Apply(tc.table, desired())
		if err != nil {
			t.Fatal(err)
		}
		_, sparkKeys := in.Parameters[KeySchema]
		if sparkKeys != (tc.want == ShapeSpark) || (in.StorageDescriptor != nil && len(in.StorageDescriptor.Columns) > 0) != (tc.want == ShapeAthena) {
			t.Errorf("%s: written %v / %+v, not in its shape", aws.ToString(tc.table.Name), in.Parameters, in.StorageDescriptor)
		}
	}
}
