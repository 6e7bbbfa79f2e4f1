package catalog_test

import (
	"encoding/json"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
)

// An update is guarded by the table's uuid and etag and carries typed
// actions; it marshals to the Delta API's wire shape.
func ExampleUpdateTableRequest() {
	hwm := int64(42)
	req := catalog.UpdateTableRequest{
		Requirements: []catalog.Requirement{
			catalog.AssertTableUUID{UUID: "6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"},
			catalog.AssertEtag{Etag: "etag-1700000100000"},
		},
		Updates: []catalog.Update{
			catalog.SetProperties{Updates: map[string]string{"delta.appendOnly": "true"}},
			catalog.SetDomainMetadata{RowIDHighWaterMark: &hwm},
		},
	}
	b, _ := json.Marshal(req)
	fmt.Println(string(b))
	// Output:
	// {"requirements":[{"type":"assert-table-uuid","uuid":"6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"},{"type":"assert-etag","etag":"etag-1700000100000"}],"updates":[{"action":"set-properties","updates":{"delta.appendOnly":"true"}},{"action":"set-domain-metadata","updates":{"delta.rowTracking":{"rowIdHighWaterMark":42}}}]}
}

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
