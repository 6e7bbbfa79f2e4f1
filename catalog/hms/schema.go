package hms

import (
	"fmt"
	"strconv"
	"unicode/utf16"
)

// ReadSchema joins a table's schema as Spark stores it: the single key
// spark.sql.sources.schema, or .numParts with .part.0 … .part.N-1 (Spark's
// CatalogTable.readLargeTableProp; both forms are read). ok is false when
// neither is present. A split schema with a missing part, or a bad
// numParts, is an error naming the key, as is a numParts more than the
// parameters could hold or parts that join to more than MaxSchemaLength
// bytes (both checked before anything is joined or allocated).
func ReadSchema(params map[string]string) (schema string, ok bool, err error) {
	if v, has := params[KeySchema]; has {
		return v, true, nil
	}
	n, has := params[KeySchemaNumParts]
	if !has {
		return "", false, nil
	}
	parts, err := strconv.Atoi(n)
	if err != nil || parts < 0 || parts > 100000 {
		return "", false, fmt.Errorf("parameter %s = %q: want a part count", KeySchemaNumParts, n)
	}
	if parts > len(params) {
		return "", false, fmt.Errorf("parameter %s = %d but the table has only %d parameters", KeySchemaNumParts, parts, len(params))
	}
	total := 0
	for i := range parts {
		k := KeySchemaPart + strconv.Itoa(i)
		p, has := params[k]
		if !has {
			return "", false, fmt.Errorf("parameter %s = %d but %s is missing", KeySchemaNumParts, parts, k)
		}
		if total += len(p); total > MaxSchemaLength {
			return "", false, fmt.Errorf("parameters %s…%s: the %d parts join to more than %d bytes", KeySchemaPart+"0", k, parts, MaxSchemaLength)
		}
	}
	b := make([]byte, 0, total)
	for i := range parts {
		b = append(b, params[KeySchemaPart+strconv.Itoa(i)]...)
	}
	return string(b), true, nil
}

// MaxSchemaLength bounds the bytes a split schema's parts may join to: 16
// MiB, far above any table's (a 10,000-column Spark schema is ~1 MiB), so
// a record that claims more is refused instead of joined.
const MaxSchemaLength = 16 << 20

// SplitSchema is how the schema is written: one key when it has at most
// SchemaPartLength characters (UTF-16 code units, as Java counts them),
// else numParts and parts of at most that many, never splitting a
// surrogate pair.
func SplitSchema(schema string) map[string]string {
	if units(schema) <= SchemaPartLength {
		return map[string]string{KeySchema: schema}
	}
	out := map[string]string{}
	n, start, width := 0, 0, 0
	for i, r := range schema {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if width+w > SchemaPartLength {
			out[KeySchemaPart+strconv.Itoa(n)] = schema[start:i]
			n, start, width = n+1, i, 0
		}
		width += w
	}
	out[KeySchemaPart+strconv.Itoa(n)] = schema[start:]
	out[KeySchemaNumParts] = strconv.Itoa(n + 1)
	return out
}

func units(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}

// ReadPartitionColumns reads spark.sql.sources.schema.numPartCols and
// .partCol.N (none: nil).
func ReadPartitionColumns(params map[string]string) ([]string, error) {
	n, has := params[KeyNumPartCols]
	if !has {
		return nil, nil
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 0 || count > 100000 {
		return nil, fmt.Errorf("parameter %s = %q: want a column count", KeyNumPartCols, n)
	}
	if count > len(params) {
		return nil, fmt.Errorf("parameter %s = %d but the table has only %d parameters", KeyNumPartCols, count, len(params))
	}
	cols := make([]string, count)
	for i := range count {
		k := KeyPartCol + strconv.Itoa(i)
		c, has := params[k]
		if !has {
			return nil, fmt.Errorf("parameter %s = %d but %s is missing", KeyNumPartCols, count, k)
		}
		cols[i] = c
	}
	return cols, nil
}

// partitionParams is how partition columns are written (none: no keys,
// as Spark writes an unpartitioned table).
func partitionParams(cols []string) map[string]string {
	out := map[string]string{}
	if len(cols) == 0 {
		return out
	}
	out[KeyNumPartCols] = strconv.Itoa(len(cols))
	for i, c := range cols {
		out[KeyPartCol+strconv.Itoa(i)] = c
	}
	return out
}
