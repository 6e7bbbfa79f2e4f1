package glue

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// sdkTypes lets cmp see the SDK structs' unexported (empty) marker fields.
var sdkTypes = cmp.Exporter(func(reflect.Type) bool { return true })

// stored is what GetTable returns after in was written over t: the
// server-owned fields of t, every field of in.
func stored(t *types.Table, in *types.TableInput) *types.Table {
	return &types.Table{
		Name: in.Name, DatabaseName: t.DatabaseName, CatalogId: t.CatalogId, CreateTime: t.CreateTime,
		CreatedBy: t.CreatedBy, VersionId: t.VersionId, Description: in.Description, Owner: in.Owner,
		LastAccessTime: in.LastAccessTime, LastAnalyzedTime: in.LastAnalyzedTime, Retention: in.Retention,
		Parameters: in.Parameters, PartitionKeys: in.PartitionKeys, StorageDescriptor: in.StorageDescriptor,
		TableType: in.TableType, TargetTable: in.TargetTable, ViewExpandedText: in.ViewExpandedText,
		ViewOriginalText: in.ViewOriginalText, FederatedTable: in.FederatedTable,
	}
}

// owned reports whether Apply may change parameter k of a record whose
// stored parameters are p.
func owned(k string, p map[string]string) bool {
	synced, _ := sparkprops.SyncedProperties(p)
	return schemaKey(k) || strings.HasPrefix(k, "delta.") || k == KeyComment || k == KeySyncedProperties || k == KeyLogSchema ||
		k == KeyTrinoVersion || k == KeyTrinoSchema || slices.Contains(synced, k) || k == "quality"
}

func TestApplyKeepsShapeAndEveryFieldItDoesNotOwn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture func() *types.Table
	}{
		{"spark", sparkTable}, {"athena", athenaTable}, {"crawler native", crawlerTable}, {"trino", trinoTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.fixture()
			d := desired()
			in, err := Apply(before, d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.fixture(), before, sdkTypes); diff != "" {
				t.Fatalf("Apply modified its input (-was +now):\n%s", diff)
			}
			shape := ShapeOf(before)
			// Everything but the owned parts is InputOf(before), field by field.
			ignore := []cmp.Option{sdkTypes, cmpopts.IgnoreFields(types.TableInput{}, "Parameters")}
			if shape != ShapeSpark {
				ignore = append(ignore, cmpopts.IgnoreFields(types.TableInput{}, "PartitionKeys"),
					cmpopts.IgnoreFields(types.StorageDescriptor{}, "Columns"))
			}
			if diff := cmp.Diff(InputOf(before), in, ignore...); diff != "" {
				t.Errorf("fields deltasync does not own changed (-stored +written):\n%s", diff)
			}
			for k := range maps.Keys(before.Parameters) {
				if !owned(k, before.Parameters) && in.Parameters[k] != before.Parameters[k] {
					t.Errorf("parameter %s = %q, was %q: not deltasync's", k, in.Parameters[k], before.Parameters[k])
				}
			}
			for k := range maps.Keys(in.Parameters) {
				if _, was := before.Parameters[k]; !was && !owned(k, in.Parameters) {
					t.Errorf("parameter %s added: not deltasync's", k)
				}
			}
			after := stored(before, in)
			ignoreT := []cmp.Option{sdkTypes, cmpopts.IgnoreFields(types.Table{}, "Parameters", "UpdateTime")}
			if shape != ShapeSpark {
				ignoreT = append(ignoreT, cmpopts.IgnoreFields(types.Table{}, "PartitionKeys"),
					cmpopts.IgnoreFields(types.StorageDescriptor{}, "Columns"))
			}
			if diff := cmp.Diff(before, after, ignoreT...); diff != "" {
				t.Errorf("the record read back differs outside what deltasync owns (-before +after):\n%s", diff)
			}
			if got := ShapeOf(after); got != shape {
				t.Errorf("shape %v after the write, was %v", got, shape)
			}
			r, err := ReadRecord(after)
			if err != nil {
				t.Fatal(err)
			}
			checkOwned(t, r, d)
			again, err := Apply(after, d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, again, sdkTypes); diff != "" {
				t.Errorf("Apply is not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}

// checkOwned: what the written record says is the log's state, in the
// places its shape keeps it.
func checkOwned(t *testing.T, r Record, d Desired) {
	t.Helper()
	if r.Shape != ShapeAthena && (!r.HasSchema || r.Schema != d.Schema) {
		t.Errorf("schema %q (has %v), want the log's", r.Schema, r.HasSchema)
	}
	if r.Shape == ShapeAthena && r.HasSchema {
		t.Errorf("an Athena record gained spark.sql.sources.schema")
	}
	if want := map[bool]string{true: d.Schema}[r.Shape == ShapeAthena]; r.LogSchema != want {
		t.Errorf("%s = %q, want %q (the log's schema in an Athena record only)", KeyLogSchema, r.LogSchema, want)
	}
	if r.Shape != ShapeSpark {
		cols, keys, _ := LogColumns(d.Schema, d.PartitionColumns)
		if !SameColumns(r.Columns, cols) || !SameColumns(r.PartitionKeys, keys) {
			t.Errorf("columns %v / keys %v, want %v / %v", r.Columns, r.PartitionKeys, cols, keys)
		}
	} else if len(r.Columns) != 1 || r.Columns[0].Name != "col" {
		t.Errorf("Spark's placeholder column replaced by %v", r.Columns)
	}
	want := Record{PartitionColumns: d.PartitionColumns, Comment: d.Comment, HasComment: true,
		Properties: d.Properties, Version: d.Version, CommitTimestamp: d.CommitTimestamp}
	got := Record{PartitionColumns: r.PartitionColumns, Comment: r.Comment, HasComment: r.HasComment,
		Properties: r.Properties, Version: r.Version, CommitTimestamp: r.CommitTimestamp}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owned parts (-log +record):\n%s", diff)
	}
	if r.TrinoVersion != "" && r.TrinoVersion != strconv.FormatInt(d.Version, 10) {
		t.Errorf("Trino's cache of version %s kept at version %d", r.TrinoVersion, d.Version)
	}
}

func TestApplyDetails(t *testing.T) {
	d := desired()
	t.Run("crawler keeps the split schema form", func(t *testing.T) {
		in, _ := Apply(crawlerTable(), d)
		if _, one := in.Parameters[KeySchema]; one || in.Parameters[KeySchemaNumParts] != "1" {
			t.Errorf("schema keys %v, want numParts=1 and part.0", in.Parameters)
		}
		if _, added := in.Parameters[KeyNumPartCols]; added {
			t.Errorf("numPartCols added to a crawler record that had none")
		}
	})
	t.Run("athena column parameters kept, no provider or path added", func(t *testing.T) {
		in, _ := Apply(athenaTable(), d)
		if got := in.StorageDescriptor.Columns[0].Parameters["lf.tag"]; got != "pii" {
			t.Errorf("column id parameters %v, want lf.tag=pii kept", in.StorageDescriptor.Columns[0].Parameters)
		}
		if got := in.PartitionKeys[0].Parameters["lf.tag"]; got != "p" {
			t.Errorf("partition key parameters lost")
		}
		if _, ok := in.Parameters[KeyProvider]; ok || in.StorageDescriptor.SerdeInfo.Parameters != nil {
			t.Errorf("provider or serde parameters added to an Athena record")
		}
	})
	t.Run("a property the log dropped is removed, another client's kept", func(t *testing.T) {
		tb := sparkTable()
		tb.Parameters["quality"], tb.Parameters["tier"] = "gold", "1"
		tb.Parameters[KeySyncedProperties] = `["quality","tier"]`
		d := desired()
		delete(d.Properties, "quality")
		in, _ := Apply(tb, d)
		if _, ok := in.Parameters["quality"]; ok {
			t.Errorf("quality kept after the log dropped it")
		}
		if _, ok := in.Parameters[KeySyncedProperties]; ok {
			t.Errorf("syncedProperties kept with nothing synced: %q", in.Parameters[KeySyncedProperties])
		}
		if in.Parameters["owner_team"] != "data" {
			t.Errorf("another client's parameter changed")
		}
	})
	t.Run("trino cache kept at its version", func(t *testing.T) {
		tb := trinoTable()
		tb.Parameters[KeyTrinoVersion] = "10"
		in, _ := Apply(tb, d)
		if in.Parameters[KeyTrinoSchema] == "" {
			t.Errorf("Trino's cache removed although it is at the log's version")
		}
	})
	t.Run("no comment removes the key", func(t *testing.T) {
		d := desired()
		d.Comment = ""
		in, _ := Apply(trinoTable(), d)
		if _, ok := in.Parameters[KeyComment]; ok {
			t.Errorf("comment kept")
		}
	})
}

func TestApplyRefuses(t *testing.T) {
	view := athenaTable()
	view.TableType = aws.String("VIRTUAL_VIEW")
	bad := desired()
	bad.Properties = map[string]string{"spark.sql.sources.provider": "x"}
	variant := desired()
	variant.Schema = `{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]}`
	for _, tc := range []struct {
		name  string
		table *types.Table
		d     Desired
		want  string
	}{
		{"a view", view, desired(), "lake.clicks: not a Delta table: a view"},
		{"a reserved log property", sparkTable(), bad, `lake.events: log property "spark.sql.sources.provider"`},
		{"a type Glue cannot spell", athenaTable(), variant, `lake.clicks: schema: field "v"`},
	} {
		if _, err := Apply(tc.table, tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestNewTableInput(t *testing.T) {
	d := desired()
	d.Location = "s3://lake/new"
	in, err := NewTableInput("new", d)
	if err != nil {
		t.Fatal(err)
	}
	p := in.Parameters
	if p[KeyProvider] != "delta" || p[KeyTableType] != "DELTA" || p["EXTERNAL"] != "TRUE" || aws.ToString(in.TableType) != "EXTERNAL_TABLE" {
		t.Errorf("markers %v / %v: want provider=delta (Spark, Trino), table_type=DELTA (Athena), EXTERNAL", p, aws.ToString(in.TableType))
	}
	sd := in.StorageDescriptor
	if aws.ToString(sd.Location) != d.Location || sd.SerdeInfo.Parameters[SerdePath] != d.Location {
		t.Errorf("location %q / path %q, want %q in both", aws.ToString(sd.Location), sd.SerdeInfo.Parameters[SerdePath], d.Location)
	}
	if sd.InputFormat == nil || sd.OutputFormat == nil || sd.SerdeInfo.SerializationLibrary == nil {
		t.Errorf("formats or serde unset: Glue federation refuses the whole database then")
	}
	tb := stored(&types.Table{DatabaseName: aws.String("lake"), VersionId: aws.String("1")}, in)
	if s := ShapeOf(tb); s != ShapeNative {
		t.Errorf("registered shape %v, want native", s)
	}
	r, err := ReadRecord(tb)
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, r, d)
	if r.Location != d.Location {
		t.Errorf("location read back %q", r.Location)
	}
	if p[KeyNumPartCols] != "1" || p[KeyPartCol+"0"] != "dt" {
		t.Errorf("Spark's partition keys %v, want numPartCols=1 partCol.0=dt", p)
	}
	if _, err := NewTableInput("new", desired()); err == nil || !strings.Contains(err.Error(), "new: no location") {
		t.Errorf("no location: err = %v", err)
	}
}

func TestLogColumns(t *testing.T) {
	long := strings.Repeat("é", 300)
	schema := `{"type":"struct","fields":[` +
		`{"name":"a","type":"integer","nullable":true,"metadata":{"comment":"` + long + `"}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"decimal(10, 2)","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
		`{"name":"p","type":"short","nullable":true,"metadata":{}}]}`
	cols, keys, err := LogColumns(schema, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "a", Type: "int", Comment: strings.Repeat("é", MaxColumnComment)},
		{Name: "m", Type: "map<string,array<decimal(10,2)>>"},
		{Name: "s", Type: "struct<x:timestamp>"},
	}
	if d := cmp.Diff(want, cols); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Column{{Name: "p", Type: "smallint"}}, keys); d != "" {
		t.Errorf("partition keys (-want +got):\n%s", d)
	}
	if _, _, err := LogColumns(schema, []string{"nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown partition column: err = %v", err)
	}
}
