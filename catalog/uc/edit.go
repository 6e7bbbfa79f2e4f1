package uc

import "github.com/deltasync/deltasync/catalog"

// UpdatesFor is the updateTable actions that make e's changes, in the
// order e.Actions names them (the watermark's update last); nil for a nil
// Edit.
func UpdatesFor(e *catalog.Edit) []Update {
	if e == nil {
		return nil
	}
	var u []Update
	if e.Columns != nil {
		u = append(u, SetColumns{Columns: *e.Columns})
	}
	if e.SetPartitioning {
		cols := e.PartitionColumns
		if cols == nil {
			cols = []string{}
		}
		u = append(u, SetPartitionColumns{Columns: cols})
	}
	if e.Protocol != nil {
		u = append(u, SetProtocol{Protocol: *e.Protocol})
	}
	if len(e.SetProperties) > 0 {
		u = append(u, SetProperties{Updates: e.SetProperties})
	}
	if len(e.RemoveProperties) > 0 {
		u = append(u, RemoveProperties{Removals: e.RemoveProperties})
	}
	if e.SetClustering {
		if len(e.Clustering) > 0 {
			cols := e.Clustering
			u = append(u, SetDomainMetadata{Clustering: &cols})
		} else {
			u = append(u, RemoveDomainMetadata{Domains: []string{catalog.DomainClustering}})
		}
	}
	if e.Comment != nil {
		u = append(u, SetTableComment{Comment: *e.Comment})
	}
	return append(u, UpdateMetadataSnapshotVersion{LastCommitVersion: e.Version, LastCommitTimestampMs: e.CommitTimestampMs})
}

// ActionNames lists the wire action names of updates, for logs and reports.
func ActionNames(us []Update) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.Action())
	}
	return out
}
