package uctest

import (
	"encoding/json"
	"testing"
)

// FuzzParseUpdate feeds arbitrary bodies to the update shape checks: they
// must answer with a request or a 400, never panic.
func FuzzParseUpdate(f *testing.F) {
	f.Add([]byte(`{"requirements":[{"type":"assert-table-uuid","uuid":"00000000-0000-4000-8000-000000000000"}],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}`))
	f.Add([]byte(`{"requirements":[],"updates":[{"action":"set-domain-metadata","updates":{"delta.clustering":{"clusteringColumns":[["a"]]}}},{"action":"remove-domain-metadata","domains":["delta.clustering"]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		u, aerr := parseUpdate(body, func(string) {})
		if (u == nil) == (aerr == nil) {
			t.Fatalf("parseUpdate(%q) = %v, %v", body, u, aerr)
		}
		if aerr != nil && aerr.Status != 400 {
			t.Fatalf("parseUpdate(%q) status %d", body, aerr.Status)
		}
	})
}

// FuzzParseColumns checks that column parsing never panics and that what it
// accepts survives a round trip through the wire form.
func FuzzParseColumns(f *testing.F) {
	f.Add([]byte(`{"type":"struct","fields":[{"name":"a","type":{"type":"map","key-type":"string","value-type":"decimal(3,1)","value-contains-null":true},"nullable":true,"metadata":{}}]}`))
	f.Add([]byte(`{"type":"struct","fields":[]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, aerr := parseColumns(raw)
		if aerr != nil {
			return
		}
		wire, err := json.Marshal(st.wire(kebab))
		if err != nil {
			t.Fatal(err)
		}
		again, aerr := parseColumns(wire)
		if aerr != nil {
			t.Fatalf("re-parse of accepted columns failed: %v", aerr)
		}
		if len(again.Fields) != len(st.Fields) {
			t.Fatalf("round trip changed the field count")
		}
	})
}
