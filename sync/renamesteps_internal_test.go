package sync

import (
	"testing"

	"github.com/deltasync/deltasync/catalog"
)

func mapped(names ...string) catalog.StructType {
	var st catalog.StructType
	for i, n := range names {
		st.Fields = append(st.Fields, catalog.StructField{Name: n, Type: catalog.DataType{Primitive: "long"},
			Metadata: map[string]any{"delta.columnMapping.id": float64(i + 1), "delta.columnMapping.physicalName": "col-" + string(rune('a'+i))}})
	}
	return st
}

func names(st catalog.StructType) string {
	s := ""
	for i, f := range st.Fields {
		if i > 0 {
			s += ","
		}
		s += f.Name
	}
	return s
}

func TestRenameSteps(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to catalog.StructType
		mode     string
		want     []string
	}{
		{"three renames, id mode", mapped("a", "b", "c"), mapped("x", "y", "z"), "id", []string{"x,b,c", "x,y,c"}},
		{"three renames, name mode", mapped("a", "b", "c"), mapped("x", "y", "z"), "name", []string{"x,b,c", "x,y,c"}},
		{"two renames and a new column", mapped("a", "b"), mapped("x", "y", "new"), "name", []string{"x,b"}},
		{"one rename needs no step", mapped("a", "b"), mapped("x", "b"), "name", nil},
		{"no column mapping", mapped("a", "b"), mapped("x", "y"), "none", nil},
		{"a swap cannot be stepped", mapped("a", "b"), mapped("b", "a"), "name", nil},
		{"a swap ignoring case cannot be stepped", mapped("a", "b"), mapped("B", "A"), "id", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := renameSteps(c.from, c.to, c.mode)
			if len(got) != len(c.want) {
				t.Fatalf("%d steps, want %d", len(got), len(c.want))
			}
			for i := range got {
				if names(got[i]) != c.want[i] {
					t.Errorf("step %d: %s, want %s", i+1, names(got[i]), c.want[i])
				}
			}
			if names(c.from) != "a,b,c" && names(c.from) != "a,b" {
				t.Errorf("from was modified: %s", names(c.from))
			}
		})
	}
}
