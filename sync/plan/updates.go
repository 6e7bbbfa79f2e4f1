package plan

import (
	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// Updates returns exactly the updateTable actions that make the catalog
// match the log: one action per differing aspect, plus
// update-metadata-snapshot-version with the log's version and commit time
// whenever anything differs. It returns nil for an empty plan (every action
// rolls the etag on the server, even a no-op, so nothing is sent then).
// Location and unsupported types are never "fixed": callers flag them.
func (p Plan) Updates(log LogState) []uc.Update {
	if !p.MetadataDrift() && p.Version == nil {
		return nil
	}
	var u []uc.Update
	if p.Schema != nil {
		u = append(u, uc.SetColumns{Columns: p.Schema.Log})
	}
	if p.Partitioning != nil {
		u = append(u, uc.SetPartitionColumns{Columns: nonNil(p.Partitioning.Log)})
	}
	if p.Protocol != nil {
		u = append(u, uc.SetProtocol{Protocol: p.Protocol.Log})
	}
	if p.Properties != nil {
		if len(p.Properties.Set) > 0 {
			u = append(u, uc.SetProperties{Updates: p.Properties.Set})
		}
		if len(p.Properties.Remove) > 0 {
			u = append(u, uc.RemoveProperties{Removals: p.Properties.Remove})
		}
	}
	if p.Clustering != nil {
		if len(p.Clustering.Log) > 0 {
			cols := p.Clustering.Log
			u = append(u, uc.SetDomainMetadata{Clustering: &cols})
		} else {
			u = append(u, uc.RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}})
		}
	}
	if p.Comment != nil {
		u = append(u, uc.SetTableComment{Comment: p.Comment.Log})
	}
	u = append(u, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: log.Version, LastCommitTimestampMs: log.CommitTimestamp})
	return u
}

// ActionNames lists the wire action names of updates, for logs and reports.
func ActionNames(us []uc.Update) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.Action())
	}
	return out
}
