package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// StructType is a Delta struct type: {"type":"struct","fields":[…]}. It is
// the model of the Delta API's `columns` and of the log's schemaString; its
// JSON methods use the Delta API's kebab-case names (see SchemaString and
// ColumnsFromSchemaString for the log's camelCase form).
type StructType struct {
	Fields []StructField
}

// StructField is one field of a StructType. Metadata holds any JSON values;
// numbers are json.Number so column-mapping ids stay exact. A nil Metadata is
// written as {} (the API requires the key).
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata map[string]any
}

// DataType is a Delta data type. Exactly one of Primitive, Array, Map,
// Struct or Other is set. Primitive holds the type string as written, e.g.
// "long", "decimal(10,2)", "timestamp_ntz" or an unsupported one like
// "void"; Other holds an object type this package does not know, as JSON.
type DataType struct {
	Primitive string
	Array     *ArrayType
	Map       *MapType
	Struct    *StructType
	Other     json.RawMessage
}

// ArrayType is a Delta array type.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

// MapType is a Delta map type.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

// style selects the JSON key names of array/map types.
type style int

const (
	kebab style = iota // Delta API: element-type, contains-null, …
	camel              // Delta log: elementType, containsNull, …
)

type keyNames struct{ elementType, containsNull, keyType, valueType, valueContainsNull string }

func (s style) keys() keyNames {
	if s == camel {
		return keyNames{"elementType", "containsNull", "keyType", "valueType", "valueContainsNull"}
	}
	return keyNames{"element-type", "contains-null", "key-type", "value-type", "value-contains-null"}
}

// MarshalJSON writes the kebab-case (Delta API) form.
func (s StructType) MarshalJSON() ([]byte, error) { return encodeStruct(&s, kebab) }

// UnmarshalJSON reads the kebab-case (Delta API) form.
func (s *StructType) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	dt, err := decodeType(b, kebab, "columns")
	if err != nil {
		return err
	}
	if dt.Struct == nil {
		return fmt.Errorf("catalog: columns: want a struct type")
	}
	*s = *dt.Struct
	return nil
}

// MarshalJSON writes the kebab-case (Delta API) form.
func (d DataType) MarshalJSON() ([]byte, error) { return encodeType(d, kebab) }

// UnmarshalJSON reads the kebab-case (Delta API) form.
func (d *DataType) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	dt, err := decodeType(b, kebab, "type")
	if err != nil {
		return err
	}
	*d = dt
	return nil
}

func encodeStruct(s *StructType, st style) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"struct","fields":[`)
	for i, f := range s.Fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		t, err := encodeType(f.Type, st)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		md := []byte("{}")
		if len(f.Metadata) > 0 {
			if md, err = marshalPlain(f.Metadata); err != nil {
				return nil, fmt.Errorf("field %q metadata: %w", f.Name, err)
			}
		}
		buf.WriteString(`{"name":`)
		writeString(&buf, f.Name)
		buf.WriteString(`,"type":`)
		buf.Write(t)
		buf.WriteString(`,"nullable":`)
		buf.WriteString(strconv.FormatBool(f.Nullable))
		buf.WriteString(`,"metadata":`)
		buf.Write(md)
		buf.WriteByte('}')
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

func encodeType(d DataType, st style) ([]byte, error) {
	k := st.keys()
	switch {
	case d.Struct != nil:
		return encodeStruct(d.Struct, st)
	case d.Array != nil:
		e, err := encodeType(d.Array.ElementType, st)
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, `{"type":"array",%q:%s,%q:%t}`, k.elementType, e, k.containsNull, d.Array.ContainsNull), nil
	case d.Map != nil:
		kt, err := encodeType(d.Map.KeyType, st)
		if err != nil {
			return nil, err
		}
		vt, err := encodeType(d.Map.ValueType, st)
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, `{"type":"map",%q:%s,%q:%s,%q:%t}`,
			k.keyType, kt, k.valueType, vt, k.valueContainsNull, d.Map.ValueContainsNull), nil
	case len(d.Other) > 0:
		return d.Other, nil
	case d.Primitive != "":
		if isPlain(d.Primitive) {
			return []byte(`"` + d.Primitive + `"`), nil
		}
		return marshalPlain(d.Primitive)
	default:
		return nil, fmt.Errorf("empty data type")
	}
}

// decodeType parses one JSON type (in style st) in a single pass: the JSON is
// decoded once into generic values (numbers as json.Number), then walked.
func decodeType(b []byte, st style, path string) (DataType, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return DataType{}, fmt.Errorf("catalog: %s: %w", path, err)
	}
	if dec.More() {
		return DataType{}, fmt.Errorf("catalog: %s: trailing data after the type", path)
	}
	return typeFromValue(v, st, path)
}

func typeFromValue(v any, st style, path string) (DataType, error) {
	switch t := v.(type) {
	case string:
		if t == "" {
			return DataType{}, fmt.Errorf("catalog: %s: empty type", path)
		}
		return DataType{Primitive: t}, nil
	case map[string]any:
		return objectType(t, st, path)
	}
	return DataType{}, fmt.Errorf("catalog: %s: want a type string or object", path)
}

func objectType(obj map[string]any, st style, path string) (DataType, error) {
	typ, ok := obj["type"].(string)
	if !ok {
		return DataType{}, fmt.Errorf("catalog: %s.type is required", path)
	}
	k := st.keys()
	switch typ {
	case "struct":
		s, err := structFromValue(obj["fields"], st, path)
		if err != nil {
			return DataType{}, err
		}
		return DataType{Struct: s}, nil
	case "array":
		et, err := childType(obj, k.elementType, st, path)
		if err != nil {
			return DataType{}, err
		}
		cn, err := boolKey(obj, k.containsNull, path)
		if err != nil {
			return DataType{}, err
		}
		return DataType{Array: &ArrayType{ElementType: et, ContainsNull: cn}}, nil
	case "map":
		kt, err := childType(obj, k.keyType, st, path)
		if err != nil {
			return DataType{}, err
		}
		vt, err := childType(obj, k.valueType, st, path)
		if err != nil {
			return DataType{}, err
		}
		vcn, err := boolKey(obj, k.valueContainsNull, path)
		if err != nil {
			return DataType{}, err
		}
		return DataType{Map: &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vcn}}, nil
	case "decimal":
		// The Delta API accepts {"type":"decimal","precision":p,"scale":s} on
		// input; we normalise to the string form it always answers with.
		p, perr := intValue(obj["precision"])
		sc, serr := intValue(obj["scale"])
		if perr != nil || serr != nil {
			return DataType{}, fmt.Errorf("catalog: %s: decimal needs integer precision and scale", path)
		}
		return DataType{Primitive: "decimal(" + strconv.FormatInt(p, 10) + "," + strconv.FormatInt(sc, 10) + ")"}, nil
	default:
		raw, err := marshalPlain(obj)
		if err != nil {
			return DataType{}, fmt.Errorf("catalog: %s: %w", path, err)
		}
		return DataType{Other: raw}, nil
	}
}

func intValue(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return n.Int64()
}

func childType(obj map[string]any, key string, st style, path string) (DataType, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return DataType{}, fmt.Errorf("catalog: %s.%s is required", path, key)
	}
	return typeFromValue(v, st, path+"."+key)
}

func boolKey(obj map[string]any, key, path string) (bool, error) {
	b, ok := obj[key].(bool)
	if !ok {
		return false, fmt.Errorf("catalog: %s.%s is required (boolean)", path, key)
	}
	return b, nil
}

func structFromValue(v any, st style, path string) (*StructType, error) {
	fields, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("catalog: %s.fields: want an array", path)
	}
	s := &StructType{Fields: make([]StructField, 0, len(fields))}
	for i, fv := range fields {
		fp := path + ".fields[" + strconv.Itoa(i) + "]"
		f, ok := fv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("catalog: %s: want an object", fp)
		}
		name, ok := f["name"].(string)
		if !ok {
			return nil, fmt.Errorf("catalog: %s.name is required", fp)
		}
		tv, ok := f["type"]
		if !ok || tv == nil {
			return nil, fmt.Errorf("catalog: %s.type is required", fp)
		}
		t, err := typeFromValue(tv, st, fp+".type")
		if err != nil {
			return nil, err
		}
		field := StructField{Name: name, Type: t, Nullable: true}
		switch n := f["nullable"].(type) {
		case bool:
			field.Nullable = n
		case nil:
		default:
			return nil, fmt.Errorf("catalog: %s.nullable: want a boolean", fp)
		}
		switch md := f["metadata"].(type) {
		case map[string]any:
			if len(md) > 0 {
				field.Metadata = md
			}
		case nil:
		default:
			return nil, fmt.Errorf("catalog: %s.metadata: want an object", fp)
		}
		s.Fields = append(s.Fields, field)
	}
	return s, nil
}

// ColumnsFromSchemaString converts the log's metaData.schemaString
// (camelCase) into the Delta API model, losslessly: names, nullability, type
// strings and field metadata are kept as written.
func ColumnsFromSchemaString(schemaString string) (StructType, error) {
	dt, err := decodeType([]byte(schemaString), camel, "schemaString")
	if err != nil {
		return StructType{}, err
	}
	if dt.Struct == nil {
		return StructType{}, fmt.Errorf("catalog: schemaString: want a struct type")
	}
	return *dt.Struct, nil
}

// SchemaString renders s as the log's metaData.schemaString (camelCase).
func (s StructType) SchemaString() (string, error) {
	b, err := encodeStruct(&s, camel)
	if err != nil {
		return "", fmt.Errorf("catalog: schema string: %w", err)
	}
	return string(b), nil
}

// serverPrimitives are the primitive types the server accepts (besides decimal).
var serverPrimitives = map[string]bool{
	"boolean": true, "byte": true, "short": true, "integer": true, "long": true, "float": true,
	"double": true, "date": true, "timestamp": true, "timestamp_ntz": true, "string": true,
	"binary": true, "variant": true,
}

var decimalRE = regexp.MustCompile(`^decimal\((\d+),\s*(\d+)\)$`)

// UnsupportedTypes lists every type in s that the Delta API cannot take, as
// "path: type", e.g. "a.b.element: void". It never changes s.
func UnsupportedTypes(s StructType) []string {
	var out []string
	walkUnsupported(DataType{Struct: &s}, "", &out)
	return out
}

func walkUnsupported(d DataType, path string, out *[]string) {
	switch {
	case d.Struct != nil:
		for _, f := range d.Struct.Fields {
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			walkUnsupported(f.Type, p, out)
		}
	case d.Array != nil:
		walkUnsupported(d.Array.ElementType, path+".element", out)
	case d.Map != nil:
		walkUnsupported(d.Map.KeyType, path+".key", out)
		walkUnsupported(d.Map.ValueType, path+".value", out)
	case len(d.Other) > 0:
		*out = append(*out, path+": "+string(d.Other))
	default:
		if !serverPrimitives[d.Primitive] && !validDecimal(d.Primitive) {
			*out = append(*out, path+": "+d.Primitive)
		}
	}
}

func validDecimal(s string) bool {
	m := decimalRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	p, err1 := strconv.Atoi(m[1])
	sc, err2 := strconv.Atoi(m[2])
	return err1 == nil && err2 == nil && p <= 38 && sc <= p
}

// marshalPlain is json.Marshal without HTML escaping, so names and metadata
// such as "a<b" keep the spelling the Delta log uses.
// writeString writes s as a JSON string, as marshalPlain would.
func writeString(buf *bytes.Buffer, s string) {
	if isPlain(s) {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	b, _ := marshalPlain(s) // a string always marshals
	buf.Write(b)
}

// isPlain reports whether s is printable ASCII with no '"' or '\\': JSON
// writes it between quotes as it is (marshalPlain does not escape HTML).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
