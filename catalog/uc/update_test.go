package uc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestUpdateWireShape(t *testing.T) {
	cols := catalog.StructType{Fields: []catalog.StructField{{Name: "id", Type: catalog.DataType{Primitive: "long"}}}}
	tests := []struct {
		name string
		u    Update
		want string
	}{
		{"set-columns", SetColumns{Columns: cols},
			`{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}}`},
		{"set-partition-columns", SetPartitionColumns{Columns: []string{"id"}},
			`{"action":"set-partition-columns","partition-columns":["id"]}`},
		{"set-partition-columns empty", SetPartitionColumns{},
			`{"action":"set-partition-columns","partition-columns":[]}`},
		{"set-protocol", SetProtocol{Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "invariants"}}},
			`{"action":"set-protocol","protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors"],"writer-features":["deletionVectors","invariants"]}}`},
		{"set-protocol legacy", SetProtocol{Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
			`{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":2}}`},
		{"set-properties", SetProperties{Updates: map[string]string{"b": "2", "a": "1"}},
			`{"action":"set-properties","updates":{"a":"1","b":"2"}}`},
		{"remove-properties", RemoveProperties{Removals: []string{"a"}},
			`{"action":"remove-properties","removals":["a"]}`},
		{"set-table-comment", SetTableComment{Comment: "hi"},
			`{"action":"set-table-comment","comment":"hi"}`},
		{"set-table-comment empty", SetTableComment{},
			`{"action":"set-table-comment","comment":""}`},
		{"set-domain-metadata both", SetDomainMetadata{Clustering: &[][]string{{"a"}, {"b", "c"}}, RowIDHighWaterMark: ptr(int64(123))},
			`{"action":"set-domain-metadata","updates":{"delta.clustering":{"clusteringColumns":[["a"],["b","c"]]},"delta.rowTracking":{"rowIdHighWaterMark":123}}}`},
		{"set-domain-metadata clustering cleared", SetDomainMetadata{Clustering: &[][]string{}},
			`{"action":"set-domain-metadata","updates":{"delta.clustering":{"clusteringColumns":[]}}}`},
		{"remove-domain-metadata", RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}},
			`{"action":"remove-domain-metadata","domains":["delta.clustering"]}`},
		{"update-metadata-snapshot-version", UpdateMetadataSnapshotVersion{LastCommitVersion: 5, LastCommitTimestampMs: 1700000000000},
			`{"action":"update-metadata-snapshot-version","last-commit-version":5,"last-commit-timestamp-ms":1700000000000}`},
		{"add-commit", AddCommit{Commit: Commit{Version: 2, Timestamp: 10, FileName: "00000000000000000002.uuid.json", FileSize: 5, FileModificationTimestamp: 11}},
			`{"action":"add-commit","commit":{"version":2,"timestamp":10,"file-name":"00000000000000000002.uuid.json","file-size":5,"file-modification-timestamp":11}}`},
		{"set-latest-backfilled-version", SetLatestBackfilledVersion{LatestPublishedVersion: 3},
			`{"action":"set-latest-backfilled-version","latest-published-version":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := UpdateTableRequest{Requirements: []Requirement{AssertTableUUID{UUID: "u"}}, Updates: []Update{tt.u}}
			got, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"requirements":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[` + tt.want + `]}`
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("wire (-want +got):\n%s", diff)
			}
			var back UpdateTableRequest
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != string(got) {
				t.Errorf("unmarshal/marshal changed it:\n%s\n%s", got, again)
			}
		})
	}
}

func TestPointerUpdatesMarshalLikeValues(t *testing.T) {
	hwm := int64(5)
	vals := UpdateTableRequest{Requirements: []Requirement{AssertTableUUID{UUID: "u"}},
		Updates: []Update{SetDomainMetadata{RowIDHighWaterMark: &hwm}, SetProperties{}}}
	ptrs := UpdateTableRequest{Requirements: []Requirement{&AssertTableUUID{UUID: "u"}},
		Updates: []Update{&SetDomainMetadata{RowIDHighWaterMark: &hwm}, &SetProperties{}}}
	a, err1 := json.Marshal(vals)
	b, err2 := json.Marshal(ptrs)
	if err1 != nil || err2 != nil || string(a) != string(b) {
		t.Errorf("values: %s (%v)\npointers: %s (%v)", a, err1, b, err2)
	}
	var nilPtr *SetColumns
	if _, err := json.Marshal(UpdateTableRequest{Updates: []Update{nilPtr}}); err == nil {
		t.Error("nil pointer update marshalled")
	}
}

func TestUpdateRequestRoundTripTyped(t *testing.T) {
	req := UpdateTableRequest{
		Requirements: []Requirement{AssertTableUUID{UUID: "11111111-2222-3333-4444-555555555555"}, AssertEtag{Etag: "etag-1"}},
		Updates: []Update{
			SetProperties{Updates: map[string]string{"k": "v"}},
			RemoveProperties{Removals: []string{"old"}},
			SetDomainMetadata{RowIDHighWaterMark: ptr(int64(7))},
		},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back UpdateTableRequest
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, back); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUpdateRequestUnmarshalRejectsUnknown(t *testing.T) {
	for _, in := range []string{
		`{"requirements":[{"type":"assert-nothing"}],"updates":[]}`,
		`{"requirements":[],"updates":[{"action":"drop-everything"}]}`,
		`{"requirements":[],"updates":[{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"a"}]}}]}`,
	} {
		var r UpdateTableRequest
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("%s: want error", in)
		}
	}
}

func TestUpdateRequestValidate(t *testing.T) {
	uuid := AssertTableUUID{UUID: "u"}
	tests := []struct {
		name    string
		req     UpdateTableRequest
		wantErr string
	}{
		{"ok", UpdateTableRequest{Requirements: []Requirement{uuid, AssertEtag{Etag: "e"}}, Updates: []Update{SetTableComment{Comment: "c"}}}, ""},
		{"no updates", UpdateTableRequest{Requirements: []Requirement{uuid}}, "at least one update"},
		{"no uuid", UpdateTableRequest{Requirements: []Requirement{AssertEtag{Etag: "e"}}, Updates: []Update{SetTableComment{}}}, "assert-table-uuid requirement is required"},
		{"duplicate action", UpdateTableRequest{Requirements: []Requirement{uuid}, Updates: []Update{SetTableComment{}, SetTableComment{}}}, "at most one set-table-comment"},
		{"set and remove overlap", UpdateTableRequest{Requirements: []Requirement{uuid}, Updates: []Update{
			SetProperties{Updates: map[string]string{"a": "1"}}, RemoveProperties{Removals: []string{"b", "a"}}}}, `overlap on key "a"`},
		{"set and remove domain overlap", UpdateTableRequest{Requirements: []Requirement{uuid}, Updates: []Update{
			SetDomainMetadata{Clustering: &[][]string{}}, RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}}}}, `overlap on domain "delta.clustering"`},
		{"set one domain, remove the other", UpdateTableRequest{Requirements: []Requirement{uuid}, Updates: []Update{
			SetDomainMetadata{RowIDHighWaterMark: ptr(int64(1))}, RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}}}}, ""},
		{"duplicate requirement", UpdateTableRequest{Requirements: []Requirement{uuid, uuid}, Updates: []Update{SetTableComment{}}}, "at most one assert-table-uuid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCreateTableRequestWire(t *testing.T) {
	req := CreateTableRequest{
		Name: "sales", Location: "s3://b/sales", TableType: TableTypeExternal,
		Columns:               catalog.StructType{Fields: []catalog.StructField{{Name: "id", Type: catalog.DataType{Primitive: "long"}}}},
		Protocol:              catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		LastCommitTimestampMs: 42,
		DomainMetadata:        &catalog.DomainMetadata{Clustering: &[][]string{{"id"}}},
	}
	got, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"sales","location":"s3://b/sales","table-type":"EXTERNAL","columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]},` +
		`"protocol":{"min-reader-version":1,"min-writer-version":2},"properties":{},"domain-metadata":{"delta.clustering":{"clusteringColumns":[["id"]]}},"last-commit-timestamp-ms":42}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
