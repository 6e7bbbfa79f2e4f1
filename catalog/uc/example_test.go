package uc_test

import (
	"encoding/json"
	"fmt"

	"github.com/deltasync/deltasync/catalog/uc"
)

// An update is guarded by the table's uuid and etag and carries typed
// actions; it marshals to the Delta API's wire shape.
func ExampleUpdateTableRequest() {
	hwm := int64(42)
	req := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{
			uc.AssertTableUUID{UUID: "6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"},
			uc.AssertEtag{Etag: "etag-1700000100000"},
		},
		Updates: []uc.Update{
			uc.SetProperties{Updates: map[string]string{"delta.appendOnly": "true"}},
			uc.SetDomainMetadata{RowIDHighWaterMark: &hwm},
		},
	}
	b, _ := json.Marshal(req)
	fmt.Println(string(b))
	// Output:
	// {"requirements":[{"type":"assert-table-uuid","uuid":"6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"},{"type":"assert-etag","etag":"etag-1700000100000"}],"updates":[{"action":"set-properties","updates":{"delta.appendOnly":"true"}},{"action":"set-domain-metadata","updates":{"delta.rowTracking":{"rowIdHighWaterMark":42}}}]}
}
