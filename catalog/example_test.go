package catalog_test

import (
	"encoding/json"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
)

// The log's camelCase schemaString and the API's kebab-case columns convert
// losslessly in both directions.
func ExampleColumnsFromSchemaString() {
	cols, _ := catalog.ColumnsFromSchemaString(`{"type":"struct","fields":[{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":7}}]}`)
	wire, _ := json.Marshal(cols)
	fmt.Println(string(wire))
	back, _ := cols.SchemaString()
	fmt.Println(back)
	// Output:
	// {"type":"struct","fields":[{"name":"tags","type":{"type":"array","element-type":"string","contains-null":true},"nullable":true,"metadata":{"delta.columnMapping.id":7}}]}
	// {"type":"struct","fields":[{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":7}}]}
}

// The server stores the protocol only as properties; it is rebuilt with the
// reader+writer feature list.
func ExampleProtocolFromProperties() {
	p, _ := catalog.ProtocolFromProperties(map[string]string{
		"delta.minReaderVersion":          "3",
		"delta.minWriterVersion":          "7",
		"delta.feature.deletionVectors":   "supported",
		"delta.feature.inCommitTimestamp": "supported",
	})
	fmt.Printf("%+v\n", p)
	// Output:
	// {MinReaderVersion:3 MinWriterVersion:7 ReaderFeatures:[deletionVectors] WriterFeatures:[deletionVectors inCommitTimestamp]}
}
