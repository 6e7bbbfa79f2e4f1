package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// StructType is a Delta schema or nested struct, in the log's camelCase
// JSON shape ({"type":"struct","fields":[...]}).
type StructType struct {
	Fields []StructField
}

// StructField is one field of a struct.
type StructField struct {
	Name     string                     `json:"name"`
	Type     DataType                   `json:"type"`
	Nullable bool                       `json:"nullable"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// DataType is a Delta data type: exactly one of Primitive (e.g. "long",
// "decimal(10,2)", "timestamp_ntz", "variant"), Struct, Array or Map is set.
type DataType struct {
	Primitive string
	Struct    *StructType
	Array     *ArrayType
	Map       *MapType
}

// ArrayType is an array type.
type ArrayType struct {
	ElementType  DataType `json:"elementType"`
	ContainsNull bool     `json:"containsNull"`
}

// MapType is a map type.
type MapType struct {
	KeyType           DataType `json:"keyType"`
	ValueType         DataType `json:"valueType"`
	ValueContainsNull bool     `json:"valueContainsNull"`
}

// maxSchemaDepth bounds the nesting of a schemaString (real schemas nest
// a few dozen levels at most); deeper input is refused before decoding.
const maxSchemaDepth = 256

// ParseSchema parses a metaData.schemaString.
func ParseSchema(schemaString string) (*StructType, error) {
	if d := jsonDepth(schemaString); d > maxSchemaDepth {
		return nil, fmt.Errorf("schema: nested %d levels deep (limit %d)", d, maxSchemaDepth)
	}
	var s StructType
	if err := json.Unmarshal([]byte(schemaString), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// UnmarshalJSON reads {"type":"struct","fields":[...]}.
func (s *StructType) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type   string        `json:"type"`
		Fields []StructField `json:"fields"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw.Type != "struct" {
		return fmt.Errorf("schema: type %q, want struct", raw.Type)
	}
	s.Fields = raw.Fields
	if s.Fields == nil {
		s.Fields = []StructField{}
	}
	return nil
}

// MarshalJSON writes {"type":"struct","fields":[...]}.
func (s StructType) MarshalJSON() ([]byte, error) {
	fields := s.Fields
	if fields == nil {
		fields = []StructField{}
	}
	return json.Marshal(struct {
		Type   string        `json:"type"`
		Fields []StructField `json:"fields"`
	}{"struct", fields})
}

// UnmarshalJSON reads a primitive type name or a nested type object.
func (t *DataType) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		name, ok := plainString(data)
		if !ok {
			if err := json.Unmarshal(data, &name); err != nil {
				return err
			}
		}
		if name == "" {
			return errors.New("schema: empty type name")
		}
		*t = DataType{Primitive: name}
		return nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	*t = DataType{}
	switch head.Type {
	case "struct":
		t.Struct = &StructType{}
		return json.Unmarshal(data, t.Struct)
	case "array":
		t.Array = &ArrayType{}
		return json.Unmarshal(data, t.Array)
	case "map":
		t.Map = &MapType{}
		return json.Unmarshal(data, t.Map)
	}
	return fmt.Errorf("schema: unknown nested type %q", head.Type)
}

// plainString returns the value of a JSON string literal that needs no
// decoding (no escapes, no control characters, valid UTF-8), as
// json.Unmarshal would, without its per-call cost: a schema's types are
// mostly such literals ("long", "decimal(10,2)"). ok is false otherwise.
func plainString(data []byte) (string, bool) {
	n := len(data)
	if n < 2 || data[0] != '"' || data[n-1] != '"' {
		return "", false
	}
	body := data[1 : n-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return string(body), true
}

// MarshalJSON writes the log's shape of the type.
func (t DataType) MarshalJSON() ([]byte, error) {
	switch {
	case t.Struct != nil:
		return json.Marshal(t.Struct)
	case t.Array != nil:
		return json.Marshal(struct {
			Type string `json:"type"`
			ArrayType
		}{"array", *t.Array})
	case t.Map != nil:
		return json.Marshal(struct {
			Type string `json:"type"`
			MapType
		}{"map", *t.Map})
	}
	return json.Marshal(t.Primitive)
}

// String renders the type compactly: struct<a:long,b:array<string>>.
func (t DataType) String() string {
	switch {
	case t.Struct != nil:
		return t.Struct.String()
	case t.Array != nil:
		return "array<" + t.Array.ElementType.String() + ">"
	case t.Map != nil:
		return "map<" + t.Map.KeyType.String() + "," + t.Map.ValueType.String() + ">"
	}
	return t.Primitive
}

// String renders the struct compactly: struct<a:long,b:string>.
func (s *StructType) String() string {
	var b strings.Builder
	b.WriteString("struct<")
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name)
		b.WriteByte(':')
		b.WriteString(f.Type.String())
	}
	b.WriteByte('>')
	return b.String()
}

// jsonDepth returns the deepest bracket nesting outside strings.
func jsonDepth(s string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
