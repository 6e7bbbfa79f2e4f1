package deltalog

import (
	"fmt"
	"strings"
	"testing"
)

// realisticSchema is a 40-column schemaString as Spark and delta-rs write
// them: mostly primitives with column-mapping metadata, a decimal, a
// nested struct, an array and a map.
func realisticSchema() string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[`)
	types := []string{`"long"`, `"string"`, `"timestamp"`, `"double"`, `"integer"`, `"boolean"`, `"date"`, `"decimal(18,2)"`}
	for i := 0; i < 40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		typ := types[i%len(types)]
		switch i {
		case 10:
			typ = `{"type":"struct","fields":[{"name":"street","type":"string","nullable":true,"metadata":{}},{"name":"zip","type":"integer","nullable":true,"metadata":{}}]}`
		case 20:
			typ = `{"type":"array","elementType":"string","containsNull":true}`
		case 30:
			typ = `{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true}`
		}
		fmt.Fprintf(&b, `{"name":"column_%02d","type":%s,"nullable":%t,"metadata":{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%08x-0000-4000-8000-%012x"}}`,
			i, typ, i%3 != 0, i+1, i*7919, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func BenchmarkParseSchema(b *testing.B) {
	s := realisticSchema()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSchema(s); err != nil {
			b.Fatal(err)
		}
	}
}
