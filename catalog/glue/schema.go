package glue

import (
	"fmt"
	"strconv"
	"unicode/utf16"
)

// MaxSchemaLength bounds the bytes a split schema's parts may join to (16
// MiB, as catalog/hms): a record that claims more is refused, not joined.
const MaxSchemaLength = 16 << 20

// ReadSchema joins a table's schema as Spark and the crawler store it: the
// single key spark.sql.sources.schema, or .numParts with .part.0 … (both
// forms are read). ok is false when neither is present. A missing part or
// a bad count is an error naming the key.
func ReadSchema(params map[string]string) (schema string, ok bool, err error) {
	if v, has := params[KeySchema]; has {
		return v, true, nil
	}
	n, has := params[KeySchemaNumParts]
	if !has {
		return "", false, nil
	}
	parts, err := strconv.Atoi(n)
	if err != nil || parts < 0 || parts > len(params) {
		return "", false, fmt.Errorf("parameter %s = %q: want a part count of at most the %d parameters", KeySchemaNumParts, n, len(params))
	}
	total := 0
	for i := range parts {
		k := KeySchemaPart + strconv.Itoa(i)
		p, has := params[k]
		if !has {
			return "", false, fmt.Errorf("parameter %s = %d but %s is missing", KeySchemaNumParts, parts, k)
		}
		if total += len(p); total > MaxSchemaLength {
			return "", false, fmt.Errorf("parameters %s…%s: the parts join to more than %d bytes", KeySchemaPart+"0", k, MaxSchemaLength)
		}
	}
	b := make([]byte, 0, total)
	for i := range parts {
		b = append(b, params[KeySchemaPart+strconv.Itoa(i)]...)
	}
	return string(b), true, nil
}

// SplitSchema is how the schema is written: one key when it has at most
// SchemaPartLength characters (UTF-16 code units, as Java counts them) and
// split is false, else numParts and parts of at most that many, never
// splitting a surrogate pair. split keeps the form of a record that holds
// parts (the crawler writes numParts=1 even for a short schema).
func SplitSchema(schema string, split bool) map[string]string {
	if !split && units(schema) <= SchemaPartLength {
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

// readPartitionKeys reads spark.sql.sources.schema.numPartCols and
// .partCol.N (none: nil, false).
func readPartitionKeys(params map[string]string) ([]string, bool, error) {
	n, has := params[KeyNumPartCols]
	if !has {
		return nil, false, nil
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 0 || count > len(params) {
		return nil, false, fmt.Errorf("parameter %s = %q: want a column count of at most the %d parameters", KeyNumPartCols, n, len(params))
	}
	cols := make([]string, count)
	for i := range count {
		k := KeyPartCol + strconv.Itoa(i)
		c, has := params[k]
		if !has {
			return nil, false, fmt.Errorf("parameter %s = %d but %s is missing", KeyNumPartCols, count, k)
		}
		cols[i] = c
	}
	return cols, true, nil
}

// partitionParams is how Spark writes partition columns (none: no keys).
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
