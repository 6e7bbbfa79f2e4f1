package uc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
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

func BenchmarkDecodeLoadTableResponse(b *testing.B) {
	cols, err := catalog.ColumnsFromSchemaString(wideSchema(1000))
	if err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(LoadTableResponse{Metadata: TableMetadata{Etag: "e", TableType: "EXTERNAL", TableUUID: "u", Location: "s3://b/t",
		Columns: cols, Properties: map[string]string{"delta.minReaderVersion": "3", "delta.minWriterVersion": "7"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var r LoadTableResponse
		if err := json.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}
