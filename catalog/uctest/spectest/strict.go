package spectest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// unknownFields lists the JSON object keys in v that schema does not
// declare. The real server parses Delta API bodies with Jackson's
// FAIL_ON_UNKNOWN_PROPERTIES, so any such key is a 400 there, although the
// API definition (no additionalProperties: false) does not forbid it.
// Discriminated schemas (requirements, updates, data types) are resolved
// through their discriminator mapping first.
func unknownFields(doc *openapi3.T, ref *openapi3.SchemaRef, v any, path string) []string {
	if ref == nil || ref.Value == nil {
		return nil
	}
	switch x := v.(type) {
	case []any:
		var out []string
		for i, e := range x {
			out = append(out, unknownFields(doc, items(ref.Value), e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case map[string]any:
		s := resolveDiscriminator(doc, ref.Value, x)
		if s == nil {
			return nil // unknown subtype: the update handler reports it
		}
		props, extra, open := collect(s, map[*openapi3.Schema]bool{})
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := path + "." + k
			if ps, ok := props[k]; ok {
				out = append(out, unknownFields(doc, ps, x[k], p)...)
				continue
			}
			if extra != nil {
				out = append(out, unknownFields(doc, extra, x[k], p)...)
				continue
			}
			if !open {
				out = append(out, strings.TrimPrefix(p, "."))
			}
		}
		return out
	}
	return nil
}

func items(s *openapi3.Schema) *openapi3.SchemaRef {
	if s.Items != nil {
		return s.Items
	}
	for _, a := range s.AllOf {
		if a.Value != nil && a.Value.Items != nil {
			return a.Value.Items
		}
	}
	return nil
}

// resolveDiscriminator picks the mapped subtype for an object whose schema
// has a discriminator; nil when the discriminator value is not mapped.
func resolveDiscriminator(doc *openapi3.T, s *openapi3.Schema, v map[string]any) *openapi3.Schema {
	d := s.Discriminator
	if d == nil {
		return s
	}
	val, _ := v[d.PropertyName].(string)
	target, ok := d.Mapping[val]
	if !ok {
		return nil
	}
	name := strings.TrimPrefix(target.Ref, "#/components/schemas/")
	if sub := doc.Components.Schemas[name]; sub != nil && sub.Value != nil {
		return sub.Value
	}
	return s
}

// collect gathers the declared properties of s and its allOf parts; extra is
// the additionalProperties schema when one is declared, open reports
// additionalProperties: true (or an untyped schema that accepts anything).
func collect(s *openapi3.Schema, seen map[*openapi3.Schema]bool) (props map[string]*openapi3.SchemaRef, extra *openapi3.SchemaRef, open bool) {
	props = map[string]*openapi3.SchemaRef{}
	if s == nil || seen[s] {
		return props, nil, false
	}
	seen[s] = true
	for k, p := range s.Properties {
		props[k] = p
	}
	if s.AdditionalProperties.Schema != nil {
		extra = s.AdditionalProperties.Schema
	}
	if s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has {
		open = true
	}
	for _, part := range append(append([]*openapi3.SchemaRef{}, s.AllOf...), append(s.OneOf, s.AnyOf...)...) {
		if part == nil || part.Value == nil {
			continue
		}
		pp, pe, po := collect(part.Value, seen)
		for k, v := range pp {
			if _, ok := props[k]; !ok {
				props[k] = v
			}
		}
		if extra == nil {
			extra = pe
		}
		open = open || po
	}
	if len(props) == 0 && extra == nil && len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) == 0 && s.Type == nil {
		open = true // {} accepts anything
	}
	return props, extra, open
}

// strictBody checks a Delta API request body for fields the server's
// models do not have.
func strictBody(doc *openapi3.T, op *openapi3.Operation, body []byte) error {
	if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil || len(body) == 0 {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	var v any // only the keys matter here, so numbers may decode as float64
	if err := json.Unmarshal(body, &v); err != nil {
		return nil // kin-openapi already judged the JSON itself
	}
	if bad := unknownFields(doc, mt.Schema, v, ""); len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("unrecognized field(s) %s: the real server rejects unknown fields in Delta API bodies (Jackson FAIL_ON_UNKNOWN_PROPERTIES)", strings.Join(quoteAll(bad), ", "))
	}
	return nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		b, _ := json.Marshal(x)
		out[i] = string(b)
	}
	return out
}
