package uctest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Table is one stored table, as the server keeps it. MutateTable hands a
// pointer to it; everything else sees copies.
type Table struct {
	Catalog, Schema, Name string
	UUID                  string
	Type                  string // MANAGED | EXTERNAL
	Format                string // DELTA, PARQUET, CSV, ...
	Location              string
	Comment               *string
	Columns               StructType
	// ColumnsCorrupt mimics a stored type_json that does not parse: loadTable
	// then answers "fields": [] (§2.4).
	ColumnsCorrupt   bool
	PartitionColumns []string
	Properties       map[string]string
	CreatedTime      int64 // ms
	UpdatedTime      int64 // ms
	Etag             string
	Commits          []Commit       // MANAGED only, ascending by version
	Uniform          map[string]any // stored UniForm metadata, if any

	// classicCols are the ColumnInfos of a non-Delta table created through
	// the classic API, shown as given (their types need not be Delta types).
	classicCols []map[string]any
}

// FullName is catalog.schema.table.
func (t *Table) FullName() string { return t.Catalog + "." + t.Schema + "." + t.Name }

func (t *Table) clone() *Table {
	c := *t
	c.Columns = t.Columns.clone()
	c.PartitionColumns = append([]string(nil), t.PartitionColumns...)
	c.Properties = make(map[string]string, len(t.Properties))
	for k, v := range t.Properties {
		c.Properties[k] = v
	}
	c.Commits = append([]Commit(nil), t.Commits...)
	if t.Comment != nil {
		s := *t.Comment
		c.Comment = &s
	}
	return &c
}

// Commit is one ratified commit of a MANAGED table.
type Commit struct {
	Version                   int64
	Timestamp                 int64
	FileName                  string
	FileSize                  int64
	FileModificationTimestamp int64
	// Backfilled marks the newest row kept after a backfill covered it.
	Backfilled bool
}

// StructType is a Delta struct: the table's columns or a nested struct.
type StructType struct{ Fields []Field }

// Field is one struct field. Metadata values keep their JSON form.
type Field struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata map[string]any
}

// DataType is a Delta data type. Name is the primitive name ("long",
// "decimal(10,2)") or "array", "map", "struct".
type DataType struct {
	Name              string
	Element           *DataType // array
	ContainsNull      bool      // array
	Key, Value        *DataType // map
	ValueContainsNull bool      // map
	Struct            *StructType
}

func (s StructType) clone() StructType {
	b, _ := json.Marshal(s.wire(kebab))
	v, _ := decodeAny(b)
	c, err := parseStruct(v, "", kebab)
	if err != nil {
		return StructType{Fields: append([]Field(nil), s.Fields...)}
	}
	return c
}

// keyStyle selects the Delta API's kebab-case or the log's camelCase names.
type keyStyle struct{ elementType, containsNull, keyType, valueType, valueContainsNull string }

var (
	kebab = keyStyle{"element-type", "contains-null", "key-type", "value-type", "value-contains-null"}
	camel = keyStyle{"elementType", "containsNull", "keyType", "valueType", "valueContainsNull"}
)

var primitives = map[string]struct{ typeText, typeName string }{
	"boolean": {"boolean", "BOOLEAN"}, "byte": {"tinyint", "BYTE"}, "short": {"smallint", "SHORT"},
	"integer": {"int", "INT"}, "long": {"bigint", "LONG"}, "float": {"float", "FLOAT"},
	"double": {"double", "DOUBLE"}, "date": {"date", "DATE"}, "timestamp": {"timestamp", "TIMESTAMP"},
	"timestamp_ntz": {"timestamp_ntz", "TIMESTAMP_NTZ"}, "string": {"string", "STRING"},
	"binary": {"binary", "BINARY"}, "variant": {"variant", "VARIANT"},
}

var decimalRE = regexp.MustCompile(`^decimal\((\d+),\s*(\d+)\)$`)

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func required(path string) error { return fmt.Errorf("%s is required.", path) }

// parseStruct reads a struct type from decoded JSON, with the server's
// structural checks (§5). path prefixes error messages.
func parseStruct(v any, path string, ks keyStyle) (StructType, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return StructType{}, fmt.Errorf("%s must be a struct object.", trimDot(path))
	}
	if t, _ := m["type"].(string); t != "struct" {
		return StructType{}, fmt.Errorf("%s.type must be \"struct\".", trimDot(path))
	}
	raw, ok := m["fields"].([]any)
	if !ok {
		return StructType{}, required(join(path, "fields"))
	}
	if len(raw) == 0 {
		return StructType{}, fmt.Errorf("%s must contain at least one field.", join(path, "fields"))
	}
	st := StructType{Fields: make([]Field, 0, len(raw))}
	seen := map[string]bool{}
	for i, fv := range raw {
		fp := fmt.Sprintf("%s[%d]", join(path, "fields"), i)
		f, err := parseField(fv, fp, ks)
		if err != nil {
			return StructType{}, err
		}
		low := strings.ToLower(f.Name)
		if seen[low] {
			return StructType{}, fmt.Errorf("Duplicate field name (case-insensitive) in %s: %s", fp, f.Name)
		}
		seen[low] = true
		st.Fields = append(st.Fields, f)
	}
	return st, nil
}

func parseField(v any, path string, ks keyStyle) (Field, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Field{}, fmt.Errorf("%s must be an object.", path)
	}
	name, _ := m["name"].(string)
	if strings.TrimSpace(name) == "" {
		return Field{}, required(path + ".name")
	}
	tv, ok := m["type"]
	if !ok || tv == nil {
		return Field{}, required(path + ".type")
	}
	dt, err := parseType(tv, path+".type", ks)
	if err != nil {
		return Field{}, err
	}
	nullable, ok := m["nullable"].(bool)
	if !ok {
		return Field{}, required(path + ".nullable")
	}
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		return Field{}, required(path + ".metadata")
	}
	return Field{Name: name, Type: dt, Nullable: nullable, Metadata: md}, nil
}

func parseType(v any, path string, ks keyStyle) (DataType, error) {
	switch t := v.(type) {
	case string:
		if _, ok := primitives[t]; ok {
			return DataType{Name: t}, nil
		}
		if m := decimalRE.FindStringSubmatch(t); m != nil {
			p, _ := strconv.Atoi(m[1])
			s, _ := strconv.Atoi(m[2])
			return decimal(p, s, path)
		}
		return DataType{}, fmt.Errorf("%s: Unsupported Delta primitive type: %s", path, t)
	case map[string]any:
		kind, _ := t["type"].(string)
		switch kind {
		case "decimal":
			p, err1 := intOf(t["precision"])
			s, err2 := intOf(t["scale"])
			if err1 != nil || err2 != nil {
				return DataType{}, fmt.Errorf("%s: decimal needs integer precision and scale", path)
			}
			return decimal(p, s, path)
		case "array":
			ev, ok := t[ks.elementType]
			if !ok || ev == nil {
				return DataType{}, required(path + "." + ks.elementType)
			}
			et, err := parseType(ev, path+"."+ks.elementType, ks)
			if err != nil {
				return DataType{}, err
			}
			cn, ok := t[ks.containsNull].(bool)
			if !ok {
				return DataType{}, required(path + "." + ks.containsNull)
			}
			return DataType{Name: "array", Element: &et, ContainsNull: cn}, nil
		case "map":
			kv, ok := t[ks.keyType]
			if !ok || kv == nil {
				return DataType{}, required(path + "." + ks.keyType)
			}
			vv, ok := t[ks.valueType]
			if !ok || vv == nil {
				return DataType{}, required(path + "." + ks.valueType)
			}
			kt, err := parseType(kv, path+"."+ks.keyType, ks)
			if err != nil {
				return DataType{}, err
			}
			vt, err := parseType(vv, path+"."+ks.valueType, ks)
			if err != nil {
				return DataType{}, err
			}
			vcn, ok := t[ks.valueContainsNull].(bool)
			if !ok {
				return DataType{}, required(path + "." + ks.valueContainsNull)
			}
			return DataType{Name: "map", Key: &kt, Value: &vt, ValueContainsNull: vcn}, nil
		case "struct":
			st, err := parseStruct(t, path, ks)
			if err != nil {
				return DataType{}, err
			}
			return DataType{Name: "struct", Struct: &st}, nil
		case "":
			return DataType{}, required(path + ".type")
		default:
			return DataType{}, fmt.Errorf("Unsupported Delta type: %s", kind)
		}
	default:
		return DataType{}, fmt.Errorf("%s must be a string or an object.", path)
	}
}

func decimal(p, s int, path string) (DataType, error) {
	if p < 0 || p > 38 {
		return DataType{}, fmt.Errorf("%s.precision must be in [0, 38], got %d.", path, p)
	}
	if s < 0 || s > p {
		return DataType{}, fmt.Errorf("%s.scale must be in [0, precision=%d], got %d.", path, p, s)
	}
	return DataType{Name: fmt.Sprintf("decimal(%d,%d)", p, s)}, nil
}

func intOf(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	i, err := strconv.Atoi(n.String())
	return i, err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func trimDot(p string) string {
	if p == "" {
		return "columns"
	}
	return p
}

// wire renders the struct as JSON-ready values in the given key style.
func (s StructType) wire(ks keyStyle) wireStruct {
	fields := make([]wireField, 0, len(s.Fields))
	for _, f := range s.Fields {
		fields = append(fields, f.wire(ks))
	}
	return wireStruct{Type: "struct", Fields: fields}
}

func (f Field) wire(ks keyStyle) wireField {
	md := f.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return wireField{Name: f.Name, Type: f.Type.wire(ks), Nullable: f.Nullable, Metadata: md}
}

func (d DataType) wire(ks keyStyle) any {
	switch d.Name {
	case "array":
		return orderedMap{{"type", "array"}, {ks.elementType, d.Element.wire(ks)}, {ks.containsNull, d.ContainsNull}}
	case "map":
		return orderedMap{{"type", "map"}, {ks.keyType, d.Key.wire(ks)}, {ks.valueType, d.Value.wire(ks)}, {ks.valueContainsNull, d.ValueContainsNull}}
	case "struct":
		return d.Struct.wire(ks)
	default:
		return d.Name
	}
}

type wireStruct struct {
	Type   string      `json:"type"`
	Fields []wireField `json:"fields"`
}

type wireField struct {
	Name     string         `json:"name"`
	Type     any            `json:"type"`
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

// orderedMap marshals its entries in order (Spark writes type first).
type orderedMap []struct {
	k string
	v any
}

func (o orderedMap) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// typeText is Spark's catalogString, as classic ColumnInfo.type_text shows.
func (d DataType) typeText() string {
	switch d.Name {
	case "array":
		return "array<" + d.Element.typeText() + ">"
	case "map":
		return "map<" + d.Key.typeText() + "," + d.Value.typeText() + ">"
	case "struct":
		parts := make([]string, 0, len(d.Struct.Fields))
		for _, f := range d.Struct.Fields {
			parts = append(parts, f.Name+":"+f.Type.typeText()) // names unquoted, as the server writes them
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	}
	if p, ok := primitives[d.Name]; ok {
		return p.typeText
	}
	return d.Name // decimal(p,s)
}

// typeName is the classic ColumnTypeName enum value.
func (d DataType) typeName() string {
	switch d.Name {
	case "array":
		return "ARRAY"
	case "map":
		return "MAP"
	case "struct":
		return "STRUCT"
	}
	if p, ok := primitives[d.Name]; ok {
		return p.typeName
	}
	return "DECIMAL"
}

// fieldIndex finds a top-level column by name, case-insensitively.
func (s StructType) fieldIndex(name string) int {
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}
