package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
)

// testdataDir returns ../shared/testdata/delta-logs relative to the repo root.
func testdataDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(testcorpus.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// collectSchemaStrings returns every distinct metaData.schemaString in the
// corpus's JSON commits (and staged commits), keyed by a file it came from.
func collectSchemaStrings(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	seen := map[string]bool{}
	root := testdataDir(t)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || !strings.Contains(path, "_delta_log") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var line struct {
				MetaData *struct {
					SchemaString string `json:"schemaString"`
				} `json:"metaData"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || line.MetaData == nil || line.MetaData.SchemaString == "" {
				continue
			}
			if s := line.MetaData.SchemaString; !seen[s] {
				seen[s] = true
				rel, _ := filepath.Rel(root, path)
				out[rel] = s
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonValue(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", s, err)
	}
	return v
}

// TestSchemaStringRoundTripCorpus: log -> API -> log is JSON-equal for every
// schemaString in the corpus, also through the API's kebab-case wire form.
func TestSchemaStringRoundTripCorpus(t *testing.T) {
	schemas := collectSchemaStrings(t)
	if len(schemas) < 10 {
		t.Fatalf("found only %d schema strings; corpus missing?", len(schemas))
	}
	keys := make([]string, 0, len(schemas))
	for k := range schemas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, file := range keys {
		ss := schemas[file]
		t.Run(file, func(t *testing.T) {
			cols, err := ColumnsFromSchemaString(ss)
			if err != nil {
				t.Fatalf("ColumnsFromSchemaString: %v", err)
			}
			// Through the wire: marshal kebab, unmarshal back.
			wire, err := json.Marshal(cols)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(wire, []byte("elementType")) || bytes.Contains(wire, []byte("valueContainsNull")) {
				t.Errorf("kebab form still has camelCase keys: %s", wire)
			}
			var back StructType
			if err := json.Unmarshal(wire, &back); err != nil {
				t.Fatalf("unmarshal wire form: %v", err)
			}
			got, err := back.SchemaString()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonValue(t, ss), jsonValue(t, got)); diff != "" {
				t.Errorf("round trip changed the schema (-log +roundtrip):\n%s", diff)
			}
		})
	}
}

func TestColumnsFromSchemaStringShapes(t *testing.T) {
	const log = `{"type":"struct","fields":[
	 {"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":12345678901234567,"delta.columnMapping.physicalName":"col-5f3a","comment":"the id"}},
	 {"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
	 {"name":"tags","type":{"type":"array","elementType":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":false},"containsNull":true},"nullable":true,"metadata":{"x":[1,2.50,{"y":null}],"b":true}},
	 {"name":"s","type":{"type":"struct","fields":[{"name":"inner","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`
	cols, err := ColumnsFromSchemaString(log)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{"comment":"the id","delta.columnMapping.id":12345678901234567,"delta.columnMapping.physicalName":"col-5f3a"}},` +
		`{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
		`{"name":"tags","type":{"type":"array","element-type":{"type":"map","key-type":"string","value-type":"integer","value-contains-null":false},"contains-null":true},"nullable":true,"metadata":{"b":true,"x":[1,2.50,{"y":null}]}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"inner","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`
	got, err := json.Marshal(cols)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("kebab form (-want +got):\n%s", diff)
	}
	if id := cols.Fields[0].Metadata["delta.columnMapping.id"]; id != json.Number("12345678901234567") {
		t.Errorf("column mapping id = %#v, want exact json.Number", id)
	}
}

func TestDataTypeDecode(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "decimal object form normalised", in: `{"type":"decimal","precision":12,"scale":3}`, want: `"decimal(12,3)"`},
		{name: "primitive", in: `"variant"`, want: `"variant"`},
		{name: "unknown object kept", in: `{"type":"udt","class":"x.Y"}`, want: `{"class":"x.Y","type":"udt"}`},
		{name: "array missing contains-null", in: `{"type":"array","element-type":"long"}`, wantErr: "contains-null is required"},
		{name: "map missing key", in: `{"type":"map","value-type":"long","value-contains-null":true}`, wantErr: "key-type is required"},
		{name: "struct field missing name", in: `{"type":"struct","fields":[{"type":"long","nullable":true,"metadata":{}}]}`, wantErr: "fields[0].name is required"},
		{name: "not a type", in: `42`, wantErr: "want a type string or object"},
		{name: "empty string", in: `""`, wantErr: "empty type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d DataType
			err := json.Unmarshal([]byte(tt.in), &d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSchemaStringKeepsSpelling(t *testing.T) {
	const log = `{"type":"struct","fields":[{"name":"a<b>&c","type":"string","nullable":true,"metadata":{"comment":"x < y & z","__COLLATIONS":{"a":"ICU.en_US"}}}]}`
	cols, err := ColumnsFromSchemaString(log)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cols.SchemaString()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[{"name":"a<b>&c","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"a":"ICU.en_US"},"comment":"x < y & z"}}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestNilMetadataAndFieldsMarshal(t *testing.T) {
	s := StructType{Fields: []StructField{{Name: "a", Type: DataType{Primitive: "long"}, Nullable: true}}}
	got, _ := json.Marshal(s)
	if want := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got, _ = json.Marshal(StructType{})
	if want := `{"type":"struct","fields":[]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestUnsupportedTypes(t *testing.T) {
	const log = `{"type":"struct","fields":[
	 {"name":"ok","type":"decimal(38,38)","nullable":true,"metadata":{}},
	 {"name":"v","type":"void","nullable":true,"metadata":{}},
	 {"name":"c","type":"char(3)","nullable":true,"metadata":{}},
	 {"name":"d","type":"decimal(39,2)","nullable":true,"metadata":{}},
	 {"name":"var","type":"variant","nullable":true,"metadata":{}},
	 {"name":"a","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"i","type":"interval","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},
	 {"name":"m","type":{"type":"map","keyType":"void","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}}]}`
	cols, err := ColumnsFromSchemaString(log)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := cols.SchemaString()
	want := []string{"v: void", "c: char(3)", "d: decimal(39,2)", "a.element.i: interval", "m.key: void"}
	if diff := cmp.Diff(want, UnsupportedTypes(cols)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	after, _ := cols.SchemaString()
	if before != after {
		t.Errorf("UnsupportedTypes changed the schema")
	}
}

// TestWriteStringAsMarshalPlain: names and type strings written without
// the encoder are what the encoder writes.
func TestWriteStringAsMarshalPlain(t *testing.T) {
	for _, s := range []string{"", "id", "a b", "<tag>&", "quo\"te", `back\slash`, "tab\t", "ünï", "\u2028", "decimal(10,2)", "x\x7f"} {
		var buf bytes.Buffer
		writeString(&buf, s)
		want, err := marshalPlain(s)
		if err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Errorf("writeString(%q) = %s, want %s", s, buf.String(), want)
		}
		got, err := encodeType(DataType{Primitive: s}, camel)
		if s != "" && (err != nil || string(got) != string(want)) {
			t.Errorf("encodeType(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
}
