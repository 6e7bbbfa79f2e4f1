package plan

import (
	"path"

	"github.com/deltasync/deltasync/catalog"
)

// DefaultIgnoreFieldMetadata are the field-metadata keys that are the
// table's state rather than its schema, left out of the schema comparison
// always (DiffOptions.IgnoreFieldMetadata adds to them).
//
// delta.identity.highWaterMark is the highest value an identity column has
// generated: writers rewrite it in the field's metadata on every insert
// that generates values (the corpus's checkpoint-v2-table moves it
// 10, 11, 21, 22, 32, 33, 43, 44 across data-only commits), so compared, it
// made every such commit a schema update. The other field-metadata keys the
// Delta protocol defines change only with a schema operation (DDL) and
// stay compared: delta.identity.start, .step and .allowExplicitInsert (the
// column's definition), delta.columnMapping.id and .physicalName,
// delta.columnMapping.nested.ids, delta.generationExpression,
// delta.invariants, delta.typeChanges (written with the type change
// itself), parquet.field.id, comment, CURRENT_DEFAULT / EXISTS_DEFAULT and
// __CHAR_VARCHAR_TYPE_STRING.
var DefaultIgnoreFieldMetadata = []string{"delta.identity.highWaterMark"}

// fieldMetadataIgnored are the globs (path.Match) of field-metadata keys
// left out of the comparison: the defaults and extra.
type fieldMetadataIgnored []string

func ignoredFieldMetadata(extra []string) fieldMetadataIgnored {
	if len(extra) == 0 {
		return DefaultIgnoreFieldMetadata
	}
	return append(append(fieldMetadataIgnored(nil), DefaultIgnoreFieldMetadata...), extra...)
}

func (g fieldMetadataIgnored) match(key string) bool {
	for _, p := range g {
		if ok, _ := path.Match(p, key); ok {
			return true
		}
	}
	return false
}

// strip returns s without the ignored field-metadata keys, at every level
// (struct fields inside structs, arrays and maps). s is not modified;
// what holds no ignored key is shared, not copied.
func (g fieldMetadataIgnored) strip(s *catalog.StructType) *catalog.StructType {
	var out *catalog.StructType
	for i := range s.Fields {
		f := &s.Fields[i]
		md, mdChanged := g.stripMetadata(f.Metadata)
		typ, typChanged := g.stripType(f.Type)
		if !mdChanged && !typChanged {
			continue
		}
		if out == nil {
			out = &catalog.StructType{Fields: append([]catalog.StructField(nil), s.Fields...)}
		}
		out.Fields[i].Metadata, out.Fields[i].Type = md, typ
	}
	if out == nil {
		return s
	}
	return out
}

func (g fieldMetadataIgnored) stripMetadata(md map[string]any) (map[string]any, bool) {
	var out map[string]any
	for k := range md {
		if !g.match(k) {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(md))
			for k2, v := range md {
				out[k2] = v
			}
		}
		delete(out, k)
	}
	if out == nil {
		return md, false
	}
	return out, true
}

func (g fieldMetadataIgnored) stripType(d catalog.DataType) (catalog.DataType, bool) {
	switch {
	case d.Struct != nil:
		if s := g.strip(d.Struct); s != d.Struct {
			d.Struct = s
			return d, true
		}
	case d.Array != nil:
		if e, ok := g.stripType(d.Array.ElementType); ok {
			a := *d.Array
			a.ElementType = e
			d.Array = &a
			return d, true
		}
	case d.Map != nil:
		k, kok := g.stripType(d.Map.KeyType)
		v, vok := g.stripType(d.Map.ValueType)
		if kok || vok {
			m := *d.Map
			m.KeyType, m.ValueType = k, v
			d.Map = &m
			return d, true
		}
	}
	return d, false
}
