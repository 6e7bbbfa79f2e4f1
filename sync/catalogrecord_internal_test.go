package sync

import (
	"encoding/json"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/google/go-cmp/cmp"
)

// RecordOf reads what Unity Catalog keeps in properties (the protocol,
// the clustering columns under either key) and in loadTable's uniform
// into the record's own fields, so that the plan compares them.
func TestRecordOfReadsWhatUnityCatalogDerives(t *testing.T) {
	v := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name     string
		mutate   func(*uc.LoadTableResponse)
		kinds    []plan.DriftKind
		actions  []string
		problems int
	}{
		{"faithful", func(*uc.LoadTableResponse) {}, nil, nil, 0},
		{"protocol feature missing", func(lt *uc.LoadTableResponse) { delete(lt.Metadata.Properties, "delta.feature.appendOnly") },
			[]plan.DriftKind{plan.KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}, 0},
		{"protocol version", func(lt *uc.LoadTableResponse) { lt.Metadata.Properties["delta.minReaderVersion"] = "2" },
			[]plan.DriftKind{plan.KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}, 0},
		{"protocol unreadable", func(lt *uc.LoadTableResponse) { lt.Metadata.Properties["delta.minReaderVersion"] = "x" },
			[]plan.DriftKind{plan.KindProtocol}, []string{"set-protocol", "update-metadata-snapshot-version"}, 0},
		{"clustering gone from catalog", func(lt *uc.LoadTableResponse) { delete(lt.Metadata.Properties, "clusteringColumns") },
			[]plan.DriftKind{plan.KindClustering}, []string{"set-domain-metadata", "update-metadata-snapshot-version"}, 0},
		{"clustering via spec key", func(lt *uc.LoadTableResponse) {
			delete(lt.Metadata.Properties, "clusteringColumns")
			lt.Metadata.Properties["delta.clusteringColumns"] = `[["col-1"]]`
		}, nil, nil, 0},
		{"clustering unreadable", func(lt *uc.LoadTableResponse) { lt.Metadata.Properties["clusteringColumns"] = `col-1` },
			nil, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := testLog()
			lt := faithfulTable(t, log)
			tc.mutate(lt)
			p := plan.Diff(log, RecordOf(catalog.TableName{Catalog: "main", Schema: "sales", Table: "orders"}, lt, log.Description, ""), plan.DiffOptions{})
			if diff := cmp.Diff(tc.kinds, p.Kinds()); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			if got := p.Edit(log).Actions(); len(got) != len(tc.actions) || len(got) > 0 && cmp.Diff(tc.actions, got) != "" {
				t.Errorf("actions %v, want %v", got, tc.actions)
			}
			if len(p.Problems) != tc.problems {
				t.Errorf("problems %q, want %d", p.Problems, tc.problems)
			}
		})
	}

	lt := faithfulTable(t, testLog())
	lt.Metadata.TableType = uc.TableTypeExternal
	lt.Metadata.Properties["delta.feature.catalogManaged"] = "supported"
	lt.LatestTableVersion = v(9)
	lt.Commits = []uc.Commit{{Version: 9, FileName: "9.uuid.json"}}
	lt.Uniform = json.RawMessage(`{"iceberg":{"metadata-location":"s3://b/t/metadata/v3.json","converted-delta-version":5}}`)
	rec := RecordOf(catalog.TableName{}, lt, "", "")
	if !rec.Managed() || rec.ID != "u1" || rec.Etag != "e1" || *rec.LatestTableVersion != 9 ||
		!cmp.Equal(rec.Commits, []plan.Commit{{Version: 9, FileName: "9.uuid.json"}}) {
		t.Errorf("record %+v: want catalog-managed, id u1, etag e1, ratified 9", rec)
	}
	if rec.Iceberg == nil || rec.Iceberg.MetadataLocation != "s3://b/t/metadata/v3.json" || *rec.Iceberg.ConvertedVersion != 5 {
		t.Errorf("iceberg pointer %+v", rec.Iceberg)
	}
}
