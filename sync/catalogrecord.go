package sync

import (
	"encoding/json"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// RecordOf describes Unity Catalog's answers for a table as the plan's
// Record: lt is the Delta API loadTable answer, comment and
// storageLocation the classic TableInfo's (the Delta API has neither). It
// is the one place a Unity Catalog answer becomes a Record: the protocol
// and the clustering columns are read from the properties the server
// derives them into, the UniForm pointer from loadTable's uniform.
func RecordOf(name catalog.TableName, lt *uc.LoadTableResponse, comment, storageLocation string) plan.Record {
	md := &lt.Metadata
	rec := plan.Record{
		Name: name, ID: md.TableUUID, Type: md.TableType, CatalogManaged: md.CatalogManaged(),
		Location: md.Location, StorageLocation: storageLocation,
		Columns: md.Columns, PartitionColumns: md.PartitionColumns, Properties: md.Properties, Comment: comment,
		LastCommitVersion: md.LastCommitVersion, LastCommitTimestampMs: md.LastCommitTimestampMs,
		LatestTableVersion: lt.LatestTableVersion, Etag: md.Etag, UpdatedTime: md.UpdatedTime,
	}
	if p, err := catalog.ProtocolFromProperties(md.Properties); err == nil {
		rec.Protocol = &p
	}
	if cols, _, err := catalog.ClusteringFromProperties(md.Properties); err != nil {
		rec.ClusteringProblem = err.Error()
	} else {
		rec.Clustering = cols
	}
	for _, c := range lt.Commits {
		rec.Commits = append(rec.Commits, plan.Commit{Version: c.Version, FileName: c.FileName})
	}
	rec.Iceberg = icebergPointerOf(lt.Uniform)
	return rec
}

// icebergPointerOf reads loadTable's uniform.iceberg, as far as it
// decodes; nil when there is none.
func icebergPointerOf(uniform json.RawMessage) *plan.IcebergPointer {
	if len(uniform) == 0 {
		return nil
	}
	var ptr struct {
		Iceberg *struct {
			MetadataLocation string `json:"metadata-location"`
			ConvertedVersion *int64 `json:"converted-delta-version"`
		} `json:"iceberg"`
	}
	_ = json.Unmarshal(uniform, &ptr)
	if ptr.Iceberg == nil {
		return nil
	}
	return &plan.IcebergPointer{MetadataLocation: ptr.Iceberg.MetadataLocation, ConvertedVersion: ptr.Iceberg.ConvertedVersion}
}
