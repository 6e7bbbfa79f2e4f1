package glue

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
)

// Column is a Glue column as deltasync compares it: its name, Hive type
// and comment. Column parameters are never compared and are kept as stored.
type Column struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Comment string `json:"comment,omitempty"`
}

// PlaceholderColumns is what Spark's Glue Hive client (and Trino) store for
// a Delta data-source table: `col array<string>` (HiveExternalCatalog's
// EMPTY_DATA_SCHEMA).
func PlaceholderColumns() []types.Column {
	return []types.Column{{Name: aws.String("col"), Type: aws.String("array<string>"), Comment: aws.String("from deserializer")}}
}

// IsPlaceholder reports whether cols are the placeholder (its comment
// aside; Trino writes `col array<varchar>`).
func IsPlaceholder(cols []types.Column) bool {
	if len(cols) != 1 || aws.ToString(cols[0].Name) != "col" {
		return false
	}
	t := strings.ToLower(aws.ToString(cols[0].Type))
	return t == "array<string>" || t == "array<varchar>"
}

func columnsOf(cols []types.Column) []Column {
	out := make([]Column, 0, len(cols))
	for _, c := range cols {
		out = append(out, Column{Name: aws.ToString(c.Name), Type: aws.ToString(c.Type), Comment: aws.ToString(c.Comment)})
	}
	return out
}

// SameColumns reports whether two column lists say the same: names and
// types compared case-insensitively (Glue documents lower-case names for
// Hive compatibility and readers compare them so; moto keeps the case),
// comments exactly.
func SameColumns(a, b []Column) bool {
	return slices.EqualFunc(a, b, func(x, y Column) bool {
		return strings.EqualFold(x.Name, y.Name) && strings.EqualFold(x.Type, y.Type) && x.Comment == y.Comment
	})
}

// LogColumns maps the log's schema to what a Glue record with real
// columns holds: the data columns (every top-level field that is not a
// partition column, in schema order) and the partition keys (in
// partitionColumns order), as Athena, the crawler and XTable store them.
// Types are spelled as Hive's type names (Spark's catalogString);
// comments come from the field metadata, cut to MaxColumnComment
// characters (Glue refuses longer ones). A type Glue has no spelling for
// (variant, intervals, an unknown one) or a partition column missing from
// the schema is an error naming the field.
func LogColumns(schema string, partitionColumns []string) (cols, keys []Column, err error) {
	s, err := catalog.ColumnsFromSchemaString(schema)
	if err != nil {
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	byName := map[string]Column{}
	for _, f := range s.Fields {
		t, err := hiveType(f.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("schema: field %q: %w", f.Name, err)
		}
		comment, _ := f.Metadata["comment"].(string)
		c := Column{Name: f.Name, Type: t, Comment: truncate(comment, MaxColumnComment)}
		byName[f.Name] = c
		if !slices.Contains(partitionColumns, f.Name) {
			cols = append(cols, c)
		}
	}
	for _, p := range partitionColumns {
		c, ok := byName[p]
		if !ok {
			return nil, nil, fmt.Errorf("schema: partition column %q is not a field of the schema", p)
		}
		keys = append(keys, c)
	}
	return cols, keys, nil
}

func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

var primitives = map[string]string{
	"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint",
	"float": "float", "double": "double", "boolean": "boolean", "string": "string",
	"binary": "binary", "date": "date", "timestamp": "timestamp",
	// Glue and Athena have one timestamp type; Athena reads a Delta
	// timestamp_ntz column as timestamp.
	"timestamp_ntz": "timestamp",
}

func hiveType(d catalog.DataType) (string, error) {
	switch {
	case d.Array != nil:
		e, err := hiveType(d.Array.ElementType)
		return "array<" + e + ">", err
	case d.Map != nil:
		k, err := hiveType(d.Map.KeyType)
		if err != nil {
			return "", err
		}
		v, err := hiveType(d.Map.ValueType)
		return "map<" + k + "," + v + ">", err
	case d.Struct != nil:
		parts := make([]string, 0, len(d.Struct.Fields))
		for _, f := range d.Struct.Fields {
			t, err := hiveType(f.Type)
			if err != nil {
				return "", fmt.Errorf("%s: %w", f.Name, err)
			}
			parts = append(parts, f.Name+":"+t)
		}
		return "struct<" + strings.Join(parts, ",") + ">", nil
	case d.Primitive != "":
		if t, ok := primitives[d.Primitive]; ok {
			return t, nil
		}
		if strings.HasPrefix(d.Primitive, "decimal(") && strings.HasSuffix(d.Primitive, ")") {
			return strings.ReplaceAll(d.Primitive, " ", ""), nil
		}
		return "", fmt.Errorf("type %q has no Glue column type", d.Primitive)
	}
	return "", fmt.Errorf("type %s has no Glue column type", d.Other)
}
