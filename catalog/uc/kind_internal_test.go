package uc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
)

func mapped(names ...string) catalog.StructType {
	var st catalog.StructType
	for i, n := range names {
		st.Fields = append(st.Fields, catalog.StructField{Name: n, Type: catalog.DataType{Primitive: "long"},
			Metadata: map[string]any{"delta.columnMapping.id": float64(i + 1), "delta.columnMapping.physicalName": "col-" + string(rune('a'+i))}})
	}
	return st
}

// physicalOnly is mapped without the ids: name-mode column mapping as a
// writer that assigns no ids has it.
func physicalOnly(names ...string) catalog.StructType {
	st := mapped(names...)
	for i := range st.Fields {
		delete(st.Fields[i].Metadata, "delta.columnMapping.id")
	}
	return st
}

// unmapped is columns without column mapping.
func unmapped(names ...string) catalog.StructType {
	st := mapped(names...)
	for i := range st.Fields {
		st.Fields[i].Metadata = nil
	}
	return st
}

func names(st catalog.StructType) string {
	s := ""
	for i, f := range st.Fields {
		if i > 0 {
			s += ","
		}
		s += f.Name
	}
	return s
}

// renamesOf is what a plan classifies as renamed between from and to
// (catalog.Edit.Renames): columns matched by their column-mapping
// physical name whose names differ. Columns without one are dropped and
// added, never renamed.
func renamesOf(from, to catalog.StructType) map[string]string {
	byPhysical := map[string]string{}
	for _, f := range to.Fields {
		if p, ok := f.Metadata["delta.columnMapping.physicalName"].(string); ok {
			byPhysical[p] = f.Name
		}
	}
	out := map[string]string{}
	for _, f := range from.Fields {
		p, ok := f.Metadata["delta.columnMapping.physicalName"].(string)
		if !ok {
			continue
		}
		if n, ok := byPhysical[p]; ok && n != f.Name {
			out[f.Name] = n
		}
	}
	return out
}

func TestRenameSteps(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to catalog.StructType
		mode     string
		want     []string
	}{
		{"three renames, id mode", mapped("a", "b", "c"), mapped("x", "y", "z"), "id", []string{"x,b,c", "x,y,c"}},
		{"three renames, name mode", mapped("a", "b", "c"), mapped("x", "y", "z"), "name", []string{"x,b,c", "x,y,c"}},
		{"two renames and a new column", mapped("a", "b"), mapped("x", "y", "new"), "name", []string{"x,b"}},
		{"one rename needs no step", mapped("a", "b"), mapped("x", "b"), "name", nil},
		{"no column mapping", mapped("a", "b"), mapped("x", "y"), "none", nil},
		{"a swap cannot be stepped", mapped("a", "b"), mapped("b", "a"), "name", nil},
		{"a swap ignoring case cannot be stepped", mapped("a", "b"), mapped("B", "A"), "id", nil},
		{"name mode without ids: the physical names", physicalOnly("a", "b", "c"), physicalOnly("x", "y", "z"), "name", []string{"x,b,c", "x,y,c"}},
		{"name mode without ids, a rename and a new column", physicalOnly("a", "b"), physicalOnly("x", "y", "new"), "name", []string{"x,b"}},
		{"columns without identity are dropped and added, not renamed", unmapped("a", "b"), unmapped("x", "y"), "name", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			renames := renamesOf(c.from, c.to)
			if c.mode != "none" && c.want != nil && len(renames) != len(c.want)+1 {
				t.Errorf("%d renames, the steps %d", len(renames), len(c.want)+1)
			}
			got := renameSteps(c.from, renames, c.mode)
			if len(got) != len(c.want) {
				t.Fatalf("%d steps, want %d", len(got), len(c.want))
			}
			for i := range got {
				if names(got[i]) != c.want[i] {
					t.Errorf("step %d: %s, want %s", i+1, names(got[i]), c.want[i])
				}
			}
			if names(c.from) != "a,b,c" && names(c.from) != "a,b" {
				t.Errorf("from was modified: %s", names(c.from))
			}
		})
	}
}

// RecordOf reads what Unity Catalog keeps in properties (the protocol,
// the clustering columns under either key) and in loadTable's uniform
// into the record's own fields, so that the plan compares them.
func TestRecordOfReadsWhatUnityCatalogDerives(t *testing.T) {
	v := func(n int64) *int64 { return &n }
	faithful := func() *LoadTableResponse {
		return &LoadTableResponse{Metadata: TableMetadata{
			TableType: TableTypeExternal, TableUUID: "u1", Etag: "e1", Location: "s3://b/t",
			Columns: mapped("a"), PartitionColumns: []string{"a"}, LastCommitVersion: v(3), UpdatedTime: 7,
			Properties: map[string]string{
				"delta.minReaderVersion": "1", "delta.minWriterVersion": "7", "delta.feature.appendOnly": "supported",
				"delta.feature.domainMetadata": "supported", "delta.feature.clustering": "supported",
				"clusteringColumns": `[["a"]]`,
			}}}
	}
	wantProto := &catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "clustering", "domainMetadata"}}
	for _, tc := range []struct {
		name       string
		mutate     func(*LoadTableResponse)
		protocol   *catalog.Protocol
		clustering [][]string
		problem    bool
	}{
		{"faithful", func(*LoadTableResponse) {}, wantProto, [][]string{{"a"}}, false},
		{"protocol feature missing", func(lt *LoadTableResponse) { delete(lt.Metadata.Properties, "delta.feature.appendOnly") },
			&catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"clustering", "domainMetadata"}}, [][]string{{"a"}}, false},
		{"protocol unreadable", func(lt *LoadTableResponse) { lt.Metadata.Properties["delta.minReaderVersion"] = "x" },
			nil, [][]string{{"a"}}, false},
		{"clustering gone from catalog", func(lt *LoadTableResponse) { delete(lt.Metadata.Properties, "clusteringColumns") },
			wantProto, nil, false},
		{"clustering via spec key", func(lt *LoadTableResponse) {
			delete(lt.Metadata.Properties, "clusteringColumns")
			lt.Metadata.Properties["delta.clusteringColumns"] = `[["a"]]`
		}, wantProto, [][]string{{"a"}}, false},
		{"clustering unreadable", func(lt *LoadTableResponse) { lt.Metadata.Properties["clusteringColumns"] = `a` },
			wantProto, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lt := faithful()
			tc.mutate(lt)
			rec := RecordOf(catalog.TableName{Catalog: "main", Schema: "sales", Table: "orders"}, lt, "the comment", "s3://b/t/")
			if diff := cmp.Diff(tc.protocol, rec.Protocol); diff != "" {
				t.Errorf("protocol (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.clustering, rec.Clustering); diff != "" {
				t.Errorf("clustering (-want +got):\n%s", diff)
			}
			if (rec.ClusteringProblem != "") != tc.problem {
				t.Errorf("clustering problem %q, want one: %v", rec.ClusteringProblem, tc.problem)
			}
			if rec.Comment != "the comment" || rec.StorageLocation != "s3://b/t/" || rec.Location != "s3://b/t" ||
				rec.ID != "u1" || rec.Etag != "e1" || *rec.LastCommitVersion != 3 || rec.UpdatedTime != 7 || rec.Managed() {
				t.Errorf("record %+v", rec)
			}
		})
	}

	lt := faithful()
	lt.Metadata.Properties["delta.feature.catalogManaged"] = "supported"
	lt.LatestTableVersion = v(9)
	lt.Commits = []Commit{{Version: 9, FileName: "9.uuid.json"}}
	lt.Uniform = json.RawMessage(`{"iceberg":{"metadata-location":"s3://b/t/metadata/v3.json","converted-delta-version":5}}`)
	rec := RecordOf(catalog.TableName{}, lt, "", "")
	if !rec.Managed() || rec.ID != "u1" || rec.Etag != "e1" || *rec.LatestTableVersion != 9 ||
		!cmp.Equal(rec.Commits, []catalog.Commit{{Version: 9, FileName: "9.uuid.json"}}) {
		t.Errorf("record %+v: want catalog-managed, id u1, etag e1, ratified 9", rec)
	}
	if rec.Iceberg == nil || rec.Iceberg.MetadataLocation != "s3://b/t/metadata/v3.json" || *rec.Iceberg.ConvertedVersion != 5 {
		t.Errorf("iceberg pointer %+v", rec.Iceberg)
	}
	lt.Uniform = json.RawMessage(`{"hudi":{}}`)
	if rec := RecordOf(catalog.TableName{}, lt, "", ""); rec.Iceberg != nil {
		t.Errorf("iceberg pointer %+v from a uniform without iceberg", rec.Iceberg)
	}
}
