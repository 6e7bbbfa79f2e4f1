package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// wideSchema is a log schemaString with n columns (mapped, nested), the size
// of wide production tables.
func wideSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"c%d","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"x","type":"decimal(10,2)","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%d","comment":"column %d"}}`, i, i+1, i, i)
	}
	b.WriteString("]}")
	return b.String()
}

func BenchmarkColumnsFromSchemaString(b *testing.B) {
	for _, n := range []int{10, 1000} {
		s := wideSchema(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := ColumnsFromSchemaString(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
