package plan

import (
	"encoding/json"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
)

// A column keeps its identity across renames under column mapping: its
// delta.columnMapping.id (id mode, and name mode as Delta writers assign
// ids there too), else its delta.columnMapping.physicalName (name mode as
// a writer that assigns no ids has it). This file is the one place sync
// matches columns by identity: the plan's changes (OpRename) and the
// rename steps sync sends (Change.Rename) both come from matchField.
const (
	columnMappingID           = "delta.columnMapping.id"
	columnMappingPhysicalName = "delta.columnMapping.physicalName"
)

// fieldID returns a column's column-mapping id, or "" without one.
func fieldID(f *catalog.StructField) string {
	v, ok := f.Metadata[columnMappingID]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// fieldPhysicalName returns a column's column-mapping physical name, or ""
// without one.
func fieldPhysicalName(f *catalog.StructField) string {
	s, _ := f.Metadata[columnMappingPhysicalName].(string)
	return s
}

// sameIdentity compares two columns' identities: by id where both have
// one, else by physical name where both have one. known is false when
// they have no identity in common to compare (then only names match
// them).
func sameIdentity(a, b *catalog.StructField) (same, known bool) {
	if ai, bi := fieldID(a), fieldID(b); ai != "" && bi != "" {
		return ai == bi, true
	}
	if ap, bp := fieldPhysicalName(a), fieldPhysicalName(b); ap != "" && bp != "" {
		return ap == bp, true
	}
	return false, false
}

// matchField finds a's counterpart among the not yet matched fields of
// before: the same identity, else the same name (unless the two have
// different identities: then it is another column); -1 if none.
func matchField(before []catalog.StructField, matched []bool, a *catalog.StructField) int {
	for i := range before {
		if same, known := sameIdentity(&before[i], a); !matched[i] && known && same {
			return i
		}
	}
	for i := range before {
		if same, known := sameIdentity(&before[i], a); !matched[i] && before[i].Name == a.Name && (!known || same) {
			return i
		}
	}
	return -1
}

// Rename returns, for a column renamed (OpRename), its name in the
// catalog and in the log; ok is false for any other change or one whose
// values are not a column's (a change not made by Changes).
func (c Change) Rename() (from, to string, ok bool) {
	const prefix = "column "
	if c.Kind != KindSchema || c.Op != OpRename || len(c.Field) <= len(prefix) || c.Field[:len(prefix)] != prefix {
		return "", "", false
	}
	var st catalog.StructType
	if json.Unmarshal([]byte(c.Log), &st) != nil || len(st.Fields) != 1 || st.Fields[0].Name == "" {
		return "", "", false
	}
	return c.Field[len(prefix):], st.Fields[0].Name, true
}
