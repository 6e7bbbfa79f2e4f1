package sparkprops

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A schema written in parts reads back whole, never split inside a
// surrogate pair, and a record that lies about its parts is refused
// naming the key.
func TestSchemaRoundTrip(t *testing.T) {
	long := strings.Repeat("a", SchemaPartLength-1) + "😀" + strings.Repeat("b", SchemaPartLength)
	for _, tc := range []struct {
		schema string
		split  bool
		parts  int
	}{{"{}", false, 0}, {"{}", true, 1}, {long, false, 3}} {
		p := SplitSchema(tc.schema, tc.split)
		if tc.parts > 0 && p[KeySchemaNumParts] != strconv.Itoa(tc.parts) {
			t.Errorf("%d chars, split %v: numParts %q, want %d", len(tc.schema), tc.split, p[KeySchemaNumParts], tc.parts)
		}
		for k, v := range p {
			if strings.HasPrefix(k, KeySchemaPart) && !utf8.ValidString(v) {
				t.Errorf("part %s splits a character", k)
			}
		}
		got, ok, err := ReadSchema(p)
		if err != nil || !ok || got != tc.schema {
			t.Errorf("ReadSchema(SplitSchema(%d chars)) = %d chars, %v, %v", len(tc.schema), len(got), ok, err)
		}
	}
	for want, p := range map[string]map[string]string{
		"want a part count":     {KeySchemaNumParts: "x"},
		"has only 1 parameters": {KeySchemaNumParts: "5"},
		"part.1 is missing":     {KeySchemaNumParts: "2", KeySchemaPart + "0": "{", "other": "x"},
	} {
		if _, _, err := ReadSchema(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSchema(%v) = %v, want %q", p, err, want)
		}
	}
}

// Partition columns round-trip; the schema keys are told from Spark's
// bucket and sort keys beside them.
func TestPartitionsAndKeys(t *testing.T) {
	cols, ok, err := ReadPartitionColumns(PartitionParams([]string{"day", "region"}))
	if err != nil || !ok || strings.Join(cols, ",") != "day,region" {
		t.Errorf("partition columns round trip: %v %v %v", cols, ok, err)
	}
	if cols, ok, err := ReadPartitionColumns(PartitionParams(nil)); err != nil || ok || cols != nil {
		t.Errorf("no partition columns: %v %v %v", cols, ok, err)
	}
	for key, want := range map[string]bool{KeySchema: true, KeySchemaPart + "12": true, KeyPartCol + "0": true,
		KeySchemaPart + "x": false, "spark.sql.sources.schema.numBuckets": false, "spark.sql.sources.schema.bucketCol.0": false} {
		if SchemaKey(key) != want {
			t.Errorf("SchemaKey(%q) = %v, want %v", key, !want, want)
		}
	}
}
