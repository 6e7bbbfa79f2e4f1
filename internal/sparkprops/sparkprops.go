// Package sparkprops is how Spark keeps a data source table's schema and
// partition columns in a metastore record's table properties — the
// spark.sql.sources.schema keys (HiveExternalCatalog's
// tableMetaToTableProps, CatalogTable.readLargeTableProp) — which the
// Hive Metastore and AWS Glue records of Spark's Delta tables both hold
// (catalog/hms, catalog/glue) — and the other parameters of such a record
// deltasync owns (owned.go: comment, version keys, log properties, Trino's
// cache), read and written by one rule for both kinds. It imports nothing
// of deltasync.
package sparkprops

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The keys.
const (
	KeySchema         = "spark.sql.sources.schema"
	KeySchemaNumParts = "spark.sql.sources.schema.numParts"
	KeySchemaPart     = "spark.sql.sources.schema.part." // + N
	KeyNumPartCols    = "spark.sql.sources.schema.numPartCols"
	KeyPartCol        = "spark.sql.sources.schema.partCol." // + N
)

// SchemaPartLength is where Spark splits spark.sql.sources.schema
// (spark.sql.sources.schemaStringLengthThreshold, 4000 by default).
const SchemaPartLength = 4000

// MaxSchemaLength bounds the bytes a split schema's parts may join to: 16
// MiB, far above any table's (a 10,000-column Spark schema is ~1 MiB), so
// a record that claims more is refused instead of joined.
const MaxSchemaLength = 16 << 20

// maxParts bounds a part or column count before anything is read.
const maxParts = 100000

// ReadSchema joins a table's schema as Spark stores it: the single key
// spark.sql.sources.schema, or .numParts with .part.0 … .part.N-1 (both
// forms are read). ok is false when neither is present. A split schema
// with a missing part, or a bad numParts, is an error naming the key, as
// is a numParts more than the parameters could hold or parts that join to
// more than MaxSchemaLength bytes (both checked before anything is joined
// or allocated).
func ReadSchema(params map[string]string) (schema string, ok bool, err error) {
	if v, has := params[KeySchema]; has {
		return v, true, nil
	}
	n, has := params[KeySchemaNumParts]
	if !has {
		return "", false, nil
	}
	parts, err := strconv.Atoi(n)
	if err != nil || parts < 0 || parts > maxParts {
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

// SplitSchema is how the schema is written: one key when it has at most
// SchemaPartLength characters (UTF-16 code units, as Java counts them) and
// split is false, else numParts and parts of at most that many, never
// splitting a surrogate pair. split keeps the form of a record that holds
// parts (the Glue crawler writes numParts=1 even for a short schema).
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

// ReadPartitionColumns reads spark.sql.sources.schema.numPartCols and
// .partCol.N (none: nil, false).
func ReadPartitionColumns(params map[string]string) ([]string, bool, error) {
	n, has := params[KeyNumPartCols]
	if !has {
		return nil, false, nil
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 0 || count > maxParts {
		return nil, false, fmt.Errorf("parameter %s = %q: want a column count", KeyNumPartCols, n)
	}
	if count > len(params) {
		return nil, false, fmt.Errorf("parameter %s = %d but the table has only %d parameters", KeyNumPartCols, count, len(params))
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

// PartitionParams is how Spark writes partition columns (none: no keys, as
// Spark writes an unpartitioned table).
func PartitionParams(cols []string) map[string]string {
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

// SchemaKey reports whether key is one of the spark.sql.sources.schema
// keys that hold the schema (whole or in parts) and the partition
// columns. The bucket and sort keys beside them are not.
func SchemaKey(key string) bool {
	switch {
	case key == KeySchema, key == KeySchemaNumParts, key == KeyNumPartCols:
		return true
	case strings.HasPrefix(key, KeySchemaPart):
		return isIndex(key[len(KeySchemaPart):])
	case strings.HasPrefix(key, KeyPartCol):
		return isIndex(key[len(KeyPartCol):])
	}
	return false
}

func isIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
