package uc

import (
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

func TestColumnsFromTypeJSON(t *testing.T) {
	cols := []ColumnInfo{
		{Name: "id", TypeJSON: `{"name":"id","type":"long","nullable":false,"metadata":{}}`},
		{Name: "m", TypeJSON: `{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{"comment":"c"}}`},
	}
	got, err := ColumnsFromTypeJSON(cols)
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.StructType{Fields: []catalog.StructField{
		{Name: "id", Type: catalog.DataType{Primitive: "long"}},
		{Name: "m", Nullable: true, Type: catalog.DataType{Map: &catalog.MapType{KeyType: catalog.DataType{Primitive: "string"}, ValueType: catalog.DataType{Primitive: "long"}, ValueContainsNull: true}},
			Metadata: map[string]any{"comment": "c"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ColumnsFromTypeJSON([]ColumnInfo{{Name: "x"}}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("missing type_json: err = %v", err)
	}
}
