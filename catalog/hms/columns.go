package hms

import (
	"encoding/json"
	"fmt"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"
)

// Columns says what deltasync keeps in the HMS columns (sd.cols).
type Columns int

const (
	// ColumnsPlaceholder is Spark's and Trino's `col array<string>` placeholder,
	// written when deltasync registers a table and otherwise never touched
	// (Spark, Trino and Delta read the schema from the log, not from here).
	ColumnsPlaceholder Columns = iota
	// ColumnsReal is the log's schema mapped to Hive types, for engines that
	// read HMS columns (Glue/Athena, Lake Formation, Hive). HMS refuses
	// incompatible type changes; that refusal is reported, never worked
	// around by recreating the table.
	ColumnsReal
)

// PlaceholderColumns is what Spark stores for a Delta table
// (HiveExternalCatalog's EMPTY_DATA_SCHEMA).
func PlaceholderColumns() []*hm.FieldSchema {
	return []*hm.FieldSchema{{Name: "col", Type: "array<string>", Comment: "from deserializer"}}
}

// IsPlaceholder reports whether cols are the placeholder (the comment
// aside: Trino writes it without one).
func IsPlaceholder(cols []*hm.FieldSchema) bool {
	return len(cols) == 1 && cols[0].Name == "col" && strings.EqualFold(cols[0].Type, "array<string>")
}

// HiveColumns maps a Delta schema (the log's schemaString, Spark's
// StructType JSON) to HMS columns: every top-level field in order (Delta
// stores partition columns as data columns, never as HMS partition keys),
// its Hive type as Spark's catalogString spells it, its comment from the
// field metadata. A type Hive has no spelling for (timestamp_ntz,
// variant, intervals) is an error naming the field.
func HiveColumns(schemaJSON string) ([]*hm.FieldSchema, error) {
	var s struct {
		Type   string            `json:"type"`
		Fields []json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal([]byte(schemaJSON), &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if s.Type != "struct" {
		return nil, fmt.Errorf("schema: type %q, want struct", s.Type)
	}
	cols := make([]*hm.FieldSchema, 0, len(s.Fields))
	for _, raw := range s.Fields {
		f, err := parseField(raw)
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		t, err := hiveType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("schema: field %q: %w", f.Name, err)
		}
		comment, _ := f.Metadata["comment"].(string)
		cols = append(cols, &hm.FieldSchema{Name: f.Name, Type: t, Comment: comment})
	}
	return cols, nil
}

type field struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Metadata map[string]any  `json:"metadata"`
}

func parseField(raw json.RawMessage) (field, error) {
	var f field
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, err
	}
	if f.Name == "" || len(f.Type) == 0 {
		return f, fmt.Errorf("field %s: want a name and a type", raw)
	}
	return f, nil
}

var primitives = map[string]string{
	"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint",
	"float": "float", "double": "double", "boolean": "boolean", "string": "string",
	"binary": "binary", "date": "date", "timestamp": "timestamp",
}

func hiveType(raw json.RawMessage) (string, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if t, ok := primitives[name]; ok {
			return t, nil
		}
		if strings.HasPrefix(name, "decimal(") && strings.HasSuffix(name, ")") {
			return strings.ReplaceAll(name, " ", ""), nil
		}
		return "", fmt.Errorf("type %q has no Hive column type", name)
	}
	var c struct {
		Type        string            `json:"type"`
		ElementType json.RawMessage   `json:"elementType"`
		KeyType     json.RawMessage   `json:"keyType"`
		ValueType   json.RawMessage   `json:"valueType"`
		Fields      []json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", err
	}
	switch c.Type {
	case "array":
		e, err := hiveType(c.ElementType)
		if err != nil {
			return "", err
		}
		return "array<" + e + ">", nil
	case "map":
		k, err := hiveType(c.KeyType)
		if err != nil {
			return "", err
		}
		v, err := hiveType(c.ValueType)
		if err != nil {
			return "", err
		}
		return "map<" + k + "," + v + ">", nil
	case "struct":
		parts := make([]string, 0, len(c.Fields))
		for _, raw := range c.Fields {
			f, err := parseField(raw)
			if err != nil {
				return "", err
			}
			t, err := hiveType(f.Type)
			if err != nil {
				return "", fmt.Errorf("%s: %w", f.Name, err)
			}
			parts = append(parts, f.Name+":"+t)
		}
		return "struct<" + strings.Join(parts, ",") + ">", nil
	}
	return "", fmt.Errorf("type %s has no Hive column type", raw)
}
