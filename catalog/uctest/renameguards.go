package uctest

import (
	"encoding/json"
	"strconv"
)

// The set-columns guards of Unity Catalog PRs #1907 (identity
// preservation), #1909 (rename/drop guards) and #1910 (partition-column
// rename), applied by WithColumnRenameGuards. Only the top level is
// checked, which is what the one-rename rule counts; the messages are this
// server's, the rules the PRs'.

const (
	cmModeKey         = "delta.columnMapping.mode"
	cmIDKey           = "delta.columnMapping.id"
	cmPhysicalNameKey = "delta.columnMapping.physicalName"
)

// columnIdentity is the key a column keeps across renames in the table's
// column-mapping mode ("" without column mapping or without the key).
func columnIdentity(f Field, mode string) string {
	switch mode {
	case "id":
		if v, ok := f.Metadata[cmIDKey]; ok {
			return canonicalMetadata(v)
		}
	case "name":
		if v, ok := f.Metadata[cmPhysicalNameKey].(string); ok {
			return v
		}
	}
	return ""
}

func canonicalMetadata(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case string:
		return x
	default:
		return ""
	}
}

// checkRenameGuards compares the stored columns of t with the columns a
// set-columns update sends.
func checkRenameGuards(t *Table, cols StructType) *apiError {
	mode := t.Properties[cmModeKey]
	newNames := map[string]bool{}
	for _, f := range cols.Fields {
		newNames[f.Name] = true
	}
	if mode != "id" && mode != "name" {
		for _, f := range t.Columns.Fields {
			if !newNames[f.Name] {
				return invalid("Cannot rename or drop column %s: the table does not use column mapping.", f.Name)
			}
		}
		return nil
	}
	byID := map[string]string{} // identity -> new name
	for _, f := range cols.Fields {
		if id := columnIdentity(f, mode); id != "" {
			byID[id] = f.Name
		}
	}
	renames := 0
	for _, f := range t.Columns.Fields {
		id := columnIdentity(f, mode)
		if id == "" {
			continue
		}
		newName, kept := byID[id]
		switch {
		case kept && newName != f.Name:
			renames++
		case !kept && newNames[f.Name]:
			return invalid("Column %s loses its column mapping identity (%s) in set-columns.", f.Name, identityKey(mode))
		}
	}
	if renames > 1 {
		return invalid("At most one top-level column rename is allowed per set-columns request; found %d.", renames)
	}
	return nil
}

func identityKey(mode string) string {
	if mode == "id" {
		return cmIDKey
	}
	return cmPhysicalNameKey
}
