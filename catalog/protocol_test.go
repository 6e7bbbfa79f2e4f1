package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProtocolProjectionRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		p     Protocol
		props map[string]string
	}{
		{"legacy 1/2", Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "2"}},
		{"writer features only 1/7", Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "inCommitTimestamp", "invariants"}},
			map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "7", "delta.feature.appendOnly": "supported",
				"delta.feature.inCommitTimestamp": "supported", "delta.feature.invariants": "supported"}},
		{"catalog managed 3/7", Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"catalogManaged", "deletionVectors", "v2Checkpoint", "vacuumProtocolCheck"},
			WriterFeatures: []string{"catalogManaged", "deletionVectors", "inCommitTimestamp", "v2Checkpoint", "vacuumProtocolCheck"}},
			map[string]string{"delta.minReaderVersion": "3", "delta.minWriterVersion": "7",
				"delta.feature.catalogManaged": "supported", "delta.feature.deletionVectors": "supported", "delta.feature.v2Checkpoint": "supported",
				"delta.feature.vacuumProtocolCheck": "supported", "delta.feature.inCommitTimestamp": "supported"}},
		{"column mapping + preview features", Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "timestampNtz", "typeWidening-preview", "variantShredding-preview", "variantType-preview"},
			WriterFeatures: []string{"clustering", "collations-preview", "columnMapping", "domainMetadata", "icebergCompatV2", "rowTracking",
				"timestampNtz", "typeWidening-preview", "variantShredding-preview", "variantType-preview"}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := ProtocolProperties(tt.p)
			if tt.props != nil {
				if diff := cmp.Diff(tt.props, props); diff != "" {
					t.Errorf("projection (-want +got):\n%s", diff)
				}
			}
			for k := range props {
				if !IsDerivedProperty(k) {
					t.Errorf("%s is projected but not derived", k)
				}
			}
			// Mixed with real configuration, the protocol comes back.
			props["delta.enableDeletionVectors"] = "true"
			props["io.unitycatalog.tableId"] = "x"
			got, err := ProtocolFromProperties(props)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.p, got); diff != "" {
				t.Errorf("rebuilt protocol (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtocolFromPropertiesGating(t *testing.T) {
	// Reader features only at reader v3; writer features only at writer v7.
	props := map[string]string{"delta.minReaderVersion": "2", "delta.minWriterVersion": "5",
		"delta.feature.columnMapping": "supported", "delta.feature.bogus": "enabled-ish"}
	got, err := ProtocolFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []map[string]string{
		{"delta.minWriterVersion": "2"},
		{"delta.minReaderVersion": "x", "delta.minWriterVersion": "2"},
		{"delta.minReaderVersion": "1", "delta.minWriterVersion": "-2"},
	} {
		if _, err := ProtocolFromProperties(bad); err == nil || !strings.Contains(err.Error(), "delta.min") {
			t.Errorf("%v: err = %v, want one naming the key", bad, err)
		}
	}
}

func TestIsDerivedProperty(t *testing.T) {
	for k, want := range map[string]bool{
		"delta.minReaderVersion": true, "delta.minWriterVersion": true, "delta.feature.x": true,
		"clusteringColumns": true, "delta.clusteringColumns": true, "delta.rowTracking.rowIdHighWaterMark": true,
		"delta.lastUpdateVersion": true, "delta.lastCommitTimestamp": true,
		"io.unitycatalog.tableId": false, "delta.enableDeletionVectors": false, "delta.columnMapping.maxColumnId": false,
		"delta.rowTracking.materializedRowIdColumnName": false, "comment": false,
	} {
		if got := IsDerivedProperty(k); got != want {
			t.Errorf("IsDerivedProperty(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestDomainMetadataFromProperties(t *testing.T) {
	tests := []struct {
		name    string
		props   map[string]string
		want    DomainMetadata
		wantErr string
	}{
		{"none", map[string]string{"a": "b"}, DomainMetadata{}, ""},
		{"server key", map[string]string{"clusteringColumns": `[["a"],["b","c"]]`, "delta.rowTracking.rowIdHighWaterMark": "99"},
			DomainMetadata{Clustering: &[][]string{{"a"}, {"b", "c"}}, RowIDHighWaterMark: ptr(int64(99))}, ""},
		{"spec key", map[string]string{"delta.clusteringColumns": `[]`}, DomainMetadata{Clustering: &[][]string{}}, ""},
		{"bad json", map[string]string{"clusteringColumns": `a,b`}, DomainMetadata{}, "clusteringColumns"},
		{"bad hwm", map[string]string{"delta.rowTracking.rowIdHighWaterMark": "x"}, DomainMetadata{}, "rowIdHighWaterMark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DomainMetadataFromProperties(tt.props)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusteringFromProperties(t *testing.T) {
	tests := []struct {
		props   map[string]string
		want    [][]string
		ok      bool
		wantErr string
	}{
		{props: nil},
		{props: map[string]string{"clusteringColumns": `[["a"],["b","c"]]`}, want: [][]string{{"a"}, {"b", "c"}}, ok: true},
		{props: map[string]string{"delta.clusteringColumns": `[["x"]]`}, want: [][]string{{"x"}}, ok: true},
		// The server's key wins over the spec's.
		{props: map[string]string{"clusteringColumns": `[["a"]]`, "delta.clusteringColumns": `[["x"]]`}, want: [][]string{{"a"}}, ok: true},
		{props: map[string]string{"clusteringColumns": `null`}, ok: true},
		{props: map[string]string{"clusteringColumns": `a,b`}, wantErr: `property clusteringColumns="a,b": not a JSON list of column paths`},
	}
	for _, tt := range tests {
		got, ok, err := ClusteringFromProperties(tt.props)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want %q", tt.props, err, tt.wantErr)
			}
			continue
		}
		if err != nil || ok != tt.ok || !cmp.Equal(got, tt.want) {
			t.Errorf("%v: got %v %v %v, want %v %v", tt.props, got, ok, err, tt.want, tt.ok)
		}
	}
}

func ptr[T any](v T) *T { return &v }
