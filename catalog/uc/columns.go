package uc

import (
	"bytes"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
)

// ColumnsFromTypeJSON rebuilds a catalog.StructType from the classic API's columns,
// whose type_json holds each top-level field as Spark (camelCase) JSON.
func ColumnsFromTypeJSON(cols []ColumnInfo) (catalog.StructType, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"struct","fields":[`)
	for i, c := range cols {
		if c.TypeJSON == "" {
			return catalog.StructType{}, fmt.Errorf("catalog: column %q has no type_json", c.Name)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(c.TypeJSON)
	}
	buf.WriteString("]}")
	return catalog.ColumnsFromSchemaString(buf.String())
}
