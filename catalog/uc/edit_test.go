package uc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// UpdatesFor sends each aspect of an Edit as its updateTable action, in
// the order Edit.Actions names them, the watermark last.
func TestUpdatesForEdit(t *testing.T) {
	cols := catalog.StructType{Fields: []catalog.StructField{{Name: "a", Type: catalog.DataType{Primitive: "long"}, Nullable: true}}}
	comment := "c"
	for _, tc := range []struct {
		name string
		e    *catalog.Edit
		want []uc.Update
	}{
		{"nil", nil, nil},
		{"watermark only", &catalog.Edit{Version: 3, CommitTimestampMs: 9},
			[]uc.Update{uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 3, LastCommitTimestampMs: 9}}},
		{"every aspect", &catalog.Edit{Columns: &cols, SetPartitioning: true, SetProperties: map[string]string{"k": "v"},
			RemoveProperties: []string{"gone"}, SetClustering: true, Clustering: [][]string{{"a"}}, Comment: &comment, Version: 4, CommitTimestampMs: 1},
			[]uc.Update{uc.SetColumns{Columns: cols}, uc.SetPartitionColumns{Columns: []string{}}, uc.SetProperties{Updates: map[string]string{"k": "v"}},
				uc.RemoveProperties{Removals: []string{"gone"}}, uc.SetDomainMetadata{Clustering: &[][]string{{"a"}}},
				uc.SetTableComment{Comment: "c"}, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 4, LastCommitTimestampMs: 1}}},
		{"clustering removed", &catalog.Edit{SetClustering: true, Version: 1},
			[]uc.Update{uc.RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}}, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := uc.UpdatesFor(tc.e)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("updates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.e.Actions(), uc.ActionNames(got)); got != nil && diff != "" {
				t.Errorf("Edit.Actions and the wire actions differ (-edit +wire):\n%s", diff)
			}
		})
	}
}
