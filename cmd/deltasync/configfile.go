package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// errConfigSyntax marks a config file that is not valid YAML: nothing in
// it was read, so validating the (default) result would only add noise.
var errConfigSyntax = errors.New("not valid YAML")

// decodeConfigYAML decodes a config file into cfg and reports every
// problem at once, each named by the full path of the key the user wrote
// (catalog.tokenfile, tables[1].mode): unknown keys, with the closest known
// key when one is near, and values of the wrong type. ${VAR} in string
// values is expanded from env first ("$$" is a "$"). A YAML syntax error
// is the only error reported for that file and wraps errConfigSyntax.
func decodeConfigYAML(data []byte, env map[string]string, cfg *config) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("%w: %s", errConfigSyntax, yamlMessage(err))
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		return fmt.Errorf("%w: %v", errConfigSyntax, err)
	}
	var missing []string
	doc = expandStrings(doc, func(name string) string {
		if name == "$" {
			return "$"
		}
		v, ok := env[name]
		if !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("refers to unset environment variables: %s", strings.Join(missing, ", ")))
	}
	if doc == nil { // an empty file
		return errors.Join(errs...)
	}
	decodeValue(doc, reflect.ValueOf(cfg).Elem(), "", &errs)
	return errors.Join(errs...)
}

// yamlMessage strips the converter's prefixes from a YAML error:
// "line 3: mapping values are not allowed in this context".
func yamlMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	return strings.TrimPrefix(msg, "yaml: ")
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// decodeValue stores v (a decoded JSON document) into dst, descending
// into structs, pointers to structs and slices of structs key by key so
// that every problem is found and named by its path.
func decodeValue(v any, dst reflect.Value, path string, errs *[]error) {
	t := dst.Type()
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		decodeLeaf(v, dst, path, errs)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if v == nil { // a key with nothing under it (all commented out) keeps the defaults
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			*errs = append(*errs, fmt.Errorf("%s: want a mapping of keys, got %s", orTop(path), jsonKind(v)))
			return
		}
		fields := structFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			idx, ok := fields[k]
			if !ok {
				msg := fmt.Sprintf("%s: unknown key", join(path, k))
				if near := closestKey(k, fields); near != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", join(path, near))
				}
				*errs = append(*errs, errors.New(msg))
				continue
			}
			decodeValue(m[k], dst.Field(idx), join(path, k), errs)
		}
	case reflect.Pointer:
		if v == nil {
			dst.SetZero()
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		decodeValue(v, dst.Elem(), path, errs)
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Struct {
			decodeLeaf(v, dst, path, errs)
			return
		}
		if v == nil {
			dst.SetZero()
			return
		}
		list, ok := v.([]any)
		if !ok {
			*errs = append(*errs, fmt.Errorf("%s: want a list, got %s", path, jsonKind(v)))
			return
		}
		out := reflect.MakeSlice(t, len(list), len(list))
		for i, item := range list {
			decodeValue(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i), errs)
		}
		dst.Set(out)
	default:
		decodeLeaf(v, dst, path, errs)
	}
}

// decodeLeaf decodes one value with encoding/json, naming the path in a
// type error ("concurrency: want a number, got string").
func decodeLeaf(v any, dst reflect.Value, path string, errs *[]error) {
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, dst.Addr().Interface())
	}
	if err == nil {
		return
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		err = fmt.Errorf("want %s, got %s", goKind(te.Type), te.Value)
	}
	*errs = append(*errs, fmt.Errorf("%s: %v", path, err))
}

// structFields maps the JSON names of a struct's fields to their index.
func structFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = i
	}
	return out
}

// closestKey returns the known key that k most likely meant: the same
// letters without separators and case (tokenfile, TokenFile, token-file
// for token_file), else one at edit distance 1 or 2.
func closestKey(k string, fields map[string]int) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(s))
	}
	best, bestD := "", 3
	for name := range fields {
		if norm(name) == norm(k) {
			return name
		}
		if d := editDistance(norm(name), norm(k)); d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the file"
	}
	return path
}

// jsonKind names the YAML kind of a decoded value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "true/false"
	}
	return fmt.Sprintf("%T", v)
}

// goKind names a Go type the way a YAML author thinks of it.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}
