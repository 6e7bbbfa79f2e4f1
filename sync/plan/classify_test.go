package plan

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
)

func col(name, typ string, nullable bool, md map[string]any) catalog.StructField {
	return catalog.StructField{Name: name, Type: catalog.DataType{Primitive: typ}, Nullable: nullable, Metadata: md}
}

func mapped(id int) map[string]any {
	return map[string]any{"delta.columnMapping.id": json.Number(strconv.Itoa(id)), "delta.columnMapping.physicalName": "col-" + strconv.Itoa(id)}
}

// physical is name-mode column mapping's field metadata as a writer that
// assigns no ids has it: the physical name alone.
func physical(name string) map[string]any {
	return map[string]any{"delta.columnMapping.physicalName": name}
}

func schemaPlan(before []catalog.StructField, after ...catalog.StructField) Plan {
	return Plan{Schema: &SchemaChange{Catalog: catalog.StructType{Fields: before}, Log: catalog.StructType{Fields: after}}}
}

func structOf(fields ...catalog.StructField) catalog.DataType {
	return catalog.DataType{Struct: &catalog.StructType{Fields: fields}}
}

// short is a change without its values, for the table below.
type short struct {
	Field   string
	Op      Op
	Class   ChangeClass
	Details []string
}

func shorten(cs []Change) []short {
	var out []short
	for _, c := range cs {
		out = append(out, short{c.Field, c.Op, c.Class, c.Details})
	}
	return out
}

// TestChangesClassified pins the class of each kind of change: the
// destructive ones of issue 24 (a column dropped, a column renamed with
// its column-mapping id kept, a type changed other than a sanctioned
// widening, nullability tightened, partition columns changed, clustering
// removed, a property removed) and those that are not (loosened
// nullability, a sanctioned widening, a changed property value, ...).
func TestChangesClassified(t *testing.T) {
	id, price, cost := col("id", "long", true, nil), col("price", "double", true, nil), col("cost", "double", true, nil)
	tests := []struct {
		name string
		plan Plan
		want []short
	}{
		{"column dropped", schemaPlan([]catalog.StructField{id, price}, id),
			[]short{{"column price", OpRemove, ClassDestructive, nil}}},
		{"column added", schemaPlan([]catalog.StructField{id}, id, price),
			[]short{{"column price", OpAdd, ClassNonDestructive, nil}}},
		{"column renamed under column mapping",
			schemaPlan([]catalog.StructField{col("id", "long", true, mapped(1)), col("price", "double", true, mapped(2))},
				col("id", "long", true, mapped(1)), col("cost", "double", true, mapped(2))),
			[]short{{"column price", OpRename, ClassDestructive, []string{`renamed to "cost" (destructive)`}}}},
		{"column renamed under name-mode column mapping without ids: the physical name is the identity",
			schemaPlan([]catalog.StructField{col("id", "long", true, physical("col-1")), col("price", "double", true, physical("col-2"))},
				col("id", "long", true, physical("col-1")), col("cost", "double", true, physical("col-2"))),
			[]short{{"column price", OpRename, ClassDestructive, []string{`renamed to "cost" (destructive)`}}}},
		{"the id is the identity where one side lacks a physical name",
			schemaPlan([]catalog.StructField{col("price", "double", true, mapped(2))},
				col("cost", "double", true, map[string]any{"delta.columnMapping.id": json.Number("2")})),
			[]short{{"column price", OpRename, ClassDestructive, []string{`renamed to "cost" (destructive)`, "metadata delta.columnMapping.physicalName changed"}}}},
		{"a name kept with another physical name is a column dropped and another added",
			schemaPlan([]catalog.StructField{col("price", "double", true, physical("col-2"))}, col("price", "double", true, physical("col-3"))),
			[]short{{"column price", OpAdd, ClassNonDestructive, nil}, {"column price", OpRemove, ClassDestructive, nil}}},
		{"a name kept with another column-mapping id is a column dropped and another added",
			schemaPlan([]catalog.StructField{col("price", "double", true, mapped(2))}, col("price", "double", true, mapped(3))),
			[]short{{"column price", OpAdd, ClassNonDestructive, nil}, {"column price", OpRemove, ClassDestructive, nil}}},
		{"without column mapping a rename is a drop and an add", schemaPlan([]catalog.StructField{price}, cost),
			[]short{{"column cost", OpAdd, ClassNonDestructive, nil}, {"column price", OpRemove, ClassDestructive, nil}}},
		{"type changed", schemaPlan([]catalog.StructField{col("v", "long", true, nil)}, col("v", "string", true, nil)),
			[]short{{"column v", OpChange, ClassDestructive, []string{"type changed long -> string (destructive)"}}}},
		{"type narrowed", schemaPlan([]catalog.StructField{col("v", "long", true, nil)}, col("v", "integer", true, nil)),
			[]short{{"column v", OpChange, ClassDestructive, []string{"type changed long -> integer (destructive)"}}}},
		{"type widened", schemaPlan([]catalog.StructField{col("v", "integer", true, nil)}, col("v", "long", true, nil)),
			[]short{{"column v", OpChange, ClassNonDestructive, []string{"type widened integer -> long"}}}},
		{"decimal widened", schemaPlan([]catalog.StructField{col("v", "decimal(10,2)", true, nil)}, col("v", "decimal(12,3)", true, nil)),
			[]short{{"column v", OpChange, ClassNonDestructive, []string{"type widened decimal(10,2) -> decimal(12,3)"}}}},
		{"nullability tightened", schemaPlan([]catalog.StructField{col("v", "long", true, nil)}, col("v", "long", false, nil)),
			[]short{{"column v", OpChange, ClassDestructive, []string{"nullability tightened: NOT NULL (destructive)"}}}},
		{"nullability loosened", schemaPlan([]catalog.StructField{col("v", "long", false, nil)}, col("v", "long", true, nil)),
			[]short{{"column v", OpChange, ClassNonDestructive, []string{"nullability loosened"}}}},
		{"a nested field dropped, an array's elements widened and loosened",
			schemaPlan([]catalog.StructField{
				{Name: "s", Nullable: true, Type: structOf(col("a", "integer", true, nil), col("b", "string", true, nil))},
				{Name: "xs", Nullable: true, Type: catalog.DataType{Array: &catalog.ArrayType{ElementType: catalog.DataType{Primitive: "float"}}}}},
				catalog.StructField{Name: "s", Nullable: true, Type: structOf(col("a", "integer", true, nil))},
				catalog.StructField{Name: "xs", Nullable: true, Type: catalog.DataType{Array: &catalog.ArrayType{ElementType: catalog.DataType{Primitive: "double"}, ContainsNull: true}}}),
			[]short{
				{"column s", OpChange, ClassDestructive, []string{"b dropped (destructive)"}},
				{"column xs", OpChange, ClassNonDestructive, []string{"element: nullability loosened", "element: type widened float -> double"}},
			}},
		{"a nested field renamed under column mapping, a map's values made NOT NULL",
			schemaPlan([]catalog.StructField{
				{Name: "s", Nullable: true, Type: structOf(col("a", "integer", true, mapped(2))), Metadata: mapped(1)},
				{Name: "m", Nullable: true, Type: catalog.DataType{Map: &catalog.MapType{KeyType: catalog.DataType{Primitive: "string"}, ValueType: catalog.DataType{Primitive: "long"}, ValueContainsNull: true}}}},
				catalog.StructField{Name: "s", Nullable: true, Type: structOf(col("b", "integer", true, mapped(2))), Metadata: mapped(1)},
				catalog.StructField{Name: "m", Nullable: true, Type: catalog.DataType{Map: &catalog.MapType{KeyType: catalog.DataType{Primitive: "string"}, ValueType: catalog.DataType{Primitive: "long"}}}}),
			[]short{
				{"column s", OpChange, ClassDestructive, []string{`a renamed to "b" (destructive)`}},
				{"column m", OpChange, ClassDestructive, []string{"value: nullability tightened: NOT NULL (destructive)"}},
			}},
		{"a struct became a string", schemaPlan([]catalog.StructField{{Name: "s", Nullable: true, Type: structOf(col("a", "integer", true, nil))}}, col("s", "string", true, nil)),
			[]short{{"column s", OpChange, ClassDestructive, []string{`type changed {"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]} -> string (destructive)`}}}},
		{"column comment", schemaPlan([]catalog.StructField{col("v", "long", true, map[string]any{"comment": "old"})}, col("v", "long", true, map[string]any{"comment": "new"})),
			[]short{{"column v", OpChange, ClassNonDestructive, []string{"metadata comment changed"}}}},
		{"columns reordered", schemaPlan([]catalog.StructField{id, price}, price, id),
			[]short{{"column price", OpMove, ClassNonDestructive, nil}, {"column id", OpMove, ClassNonDestructive, nil}}},
		{"partitioning changed", Plan{Partitioning: &PartitioningChange{Catalog: []string{"day"}, Log: []string{"region"}}},
			[]short{{"partition columns", OpChange, ClassDestructive, nil}}},
		{"partitioning added", Plan{Partitioning: &PartitioningChange{Catalog: []string{}, Log: []string{"region"}}},
			[]short{{"partition columns", OpAdd, ClassDestructive, nil}}},
		{"partitioning removed", Plan{Partitioning: &PartitioningChange{Catalog: []string{"day"}, Log: []string{}}},
			[]short{{"partition columns", OpRemove, ClassDestructive, nil}}},
		{"clustering removed", Plan{Clustering: &ClusteringChange{Catalog: [][]string{{"a"}}}},
			[]short{{"clustering columns", OpRemove, ClassDestructive, nil}}},
		{"clustering changed", Plan{Clustering: &ClusteringChange{Catalog: [][]string{{"a"}}, Log: [][]string{{"b"}}}},
			[]short{{"clustering columns", OpChange, ClassNonDestructive, nil}}},
		{"clustering added", Plan{Clustering: &ClusteringChange{Log: [][]string{{"b"}}}},
			[]short{{"clustering columns", OpAdd, ClassNonDestructive, nil}}},
		{"properties", Plan{Properties: &PropertiesChange{Set: map[string]string{"a": "2", "b": "1"}, Catalog: map[string]string{"a": "1"}, Remove: []string{"c"}}},
			[]short{{"property a", OpChange, ClassNonDestructive, nil}, {"property b", OpAdd, ClassNonDestructive, nil}, {"property c", OpRemove, ClassDestructive, nil}}},
		{"protocol, comment and watermark", Plan{Protocol: &ProtocolChange{Log: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7}},
			Comment: &ValueChange{Catalog: "a", Log: "b"}, Version: &VersionChange{Log: 4}},
			[]short{{"protocol", OpAdd, ClassNonDestructive, nil}, {"comment", OpChange, ClassNonDestructive, nil}, {"watermark", OpAdd, ClassNonDestructive, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.plan.Changes()
			if d := cmp.Diff(tt.want, shorten(got)); d != "" {
				t.Errorf("Changes (-want +got):\n%s", d)
			}
			var want []short
			for _, c := range tt.want {
				if c.Class == ClassDestructive {
					want = append(want, c)
				}
			}
			if d := cmp.Diff(want, shorten(tt.plan.Destructive())); d != "" {
				t.Errorf("Destructive (-want +got):\n%s", d)
			}
		})
	}
}

// TestIsTypeWidening pins the type changes the Delta protocol's type
// widening feature sanctions, and some it does not.
func TestIsTypeWidening(t *testing.T) {
	widening := [][2]string{
		{"byte", "short"}, {"byte", "integer"}, {"byte", "long"}, {"short", "integer"}, {"short", "long"},
		{"integer", "long"}, {"float", "double"}, {"byte", "double"}, {"short", "double"}, {"integer", "double"},
		{"date", "timestamp_ntz"}, {"decimal(10,2)", "decimal(12,2)"}, {"decimal(10,1)", "decimal(12,3)"},
		{"decimal(10, 1)", "decimal(11,1)"}, {"decimal(10,2)", "decimal(11,3)"}, {"integer", "decimal(10,0)"},
		{"byte", "decimal(12,2)"}, {"long", "decimal(20,0)"}, {"long", "decimal(22,2)"},
	}
	for _, w := range widening {
		if !IsTypeWidening(w[0], w[1]) {
			t.Errorf("IsTypeWidening(%s, %s) = false, want true", w[0], w[1])
		}
	}
	not := [][2]string{
		{"long", "integer"}, {"double", "float"}, {"long", "double"}, {"integer", "string"}, {"string", "binary"},
		{"timestamp_ntz", "date"}, {"date", "timestamp"}, {"timestamp", "timestamp_ntz"},
		{"decimal(10,2)", "decimal(10,3)"}, {"decimal(11,3)", "decimal(12,5)"}, {"decimal(12,2)", "decimal(10,2)"},
		{"decimal(10,2)", "decimal(10,2)"}, {"integer", "decimal(9,0)"}, {"long", "decimal(20,1)"},
		{"float", "decimal(10,2)"}, {"long", "long"}, {"boolean", "integer"},
	}
	for _, n := range not {
		if IsTypeWidening(n[0], n[1]) {
			t.Errorf("IsTypeWidening(%s, %s) = true, want false", n[0], n[1])
		}
	}
}

// TestRenameFromDiff classifies what Diff finds in a log's camelCase
// schema string: a column-mapped rename is one destructive change.
func TestRenameFromDiff(t *testing.T) {
	schema := func(name string) string {
		return `{"type":"struct","fields":[` +
			`{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},` +
			`{"name":"` + name + `","type":"double","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}`
	}
	cols, err := catalog.ColumnsFromSchemaString(schema("price"))
	if err != nil {
		t.Fatal(err)
	}
	v := int64(1)
	rec := Record{Name: catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}}
	rec.Columns = cols
	rec.LastCommitVersion = &v
	rec.Protocol = &catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	p := Diff(LogState{Version: 2, SchemaString: schema("cost"), Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}, rec, DiffOptions{})
	want := []short{
		{"column price", OpRename, ClassDestructive, []string{`renamed to "cost" (destructive)`}},
		{"watermark", OpChange, ClassNonDestructive, nil},
	}
	if d := cmp.Diff(want, shorten(p.Changes())); d != "" {
		t.Errorf("Changes (-want +got):\n%s", d)
	}
	// Details say the same columns as Changes, in words: one rename, not
	// the add and drop a match by name would make of it.
	if d := cmp.Diff([]string{`rename column "price"`}, p.Schema.Details); d != "" {
		t.Errorf("Details (-want +got):\n%s", d)
	}
}

// TestChangeRename reads both names of a rename back from the change, for
// every identity a rename is matched by, and nothing from other changes.
func TestChangeRename(t *testing.T) {
	for _, md := range []func() map[string]any{
		func() map[string]any { return mapped(2) },
		func() map[string]any { return physical("col-2") },
	} {
		cs := schemaPlan([]catalog.StructField{col("id", "long", true, nil), col("price", "double", true, md())},
			col("id", "long", false, nil), col("cost", "double", true, md())).Changes()
		var renames [][2]string
		for _, c := range cs {
			if from, to, ok := c.Rename(); ok {
				renames = append(renames, [2]string{from, to})
			}
		}
		if d := cmp.Diff([][2]string{{"price", "cost"}}, renames); d != "" {
			t.Errorf("renames (-want +got):\n%s", d)
		}
	}
	if _, _, ok := (Change{Kind: KindSchema, Field: "column x", Op: OpRename, Log: "not json"}).Rename(); ok {
		t.Error("a rename whose Log is not a column was read")
	}
}
