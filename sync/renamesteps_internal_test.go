package sync

import (
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/plan"
)

func mapped(names ...string) catalog.StructType {
	var st catalog.StructType
	for i, n := range names {
		st.Fields = append(st.Fields, catalog.StructField{Name: n, Type: catalog.DataType{Primitive: "long"},
			Metadata: map[string]any{"delta.columnMapping.id": float64(i + 1), "delta.columnMapping.physicalName": "col-" + string(rune('a'+i))}})
	}
	return st
}

// physicalOnly is mapped without the ids: name-mode column mapping as a
// writer that assigns no ids has it.
func physicalOnly(names ...string) catalog.StructType {
	st := mapped(names...)
	for i := range st.Fields {
		delete(st.Fields[i].Metadata, "delta.columnMapping.id")
	}
	return st
}

// unmapped is columns without column mapping.
func unmapped(names ...string) catalog.StructType {
	st := mapped(names...)
	for i := range st.Fields {
		st.Fields[i].Metadata = nil
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
		{"name mode without ids: the physical names", physicalOnly("a", "b", "c"), physicalOnly("x", "y", "z"), "name", []string{"x,b,c", "x,y,c"}},
		{"name mode without ids, a rename and a new column", physicalOnly("a", "b"), physicalOnly("x", "y", "new"), "name", []string{"x,b"}},
		{"columns without identity are dropped and added, not renamed", unmapped("a", "b"), unmapped("x", "y"), "name", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The steps take the renames the plan classified, so the two
			// agree: as many steps as renames, less the one the planned
			// update holds.
			changes := plan.Plan{Schema: &plan.SchemaChange{Catalog: c.from, Log: c.to}}.Changes()
			renames := 0
			for _, ch := range changes {
				if _, _, ok := ch.Rename(); ok {
					renames++
				}
			}
			if c.mode != "none" && c.want != nil && renames != len(c.want)+1 {
				t.Errorf("the plan has %d renames, the steps %d", renames, len(c.want)+1)
			}
			got := renameSteps(c.from, changes, c.mode)
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
