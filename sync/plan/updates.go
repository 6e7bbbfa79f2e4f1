package plan

import "github.com/deltasync/deltasync/catalog"

// Edit returns exactly what a write must change to make the catalog match
// the log: each differing aspect, and the watermark (the log's version and
// commit time) whenever anything differs. It returns nil for an empty plan
// (every write rolls the record's etag, even a no-op, so nothing is sent
// then). Location and unsupported types are never "fixed": callers flag
// them.
func (p Plan) Edit(log LogState) *catalog.Edit {
	if !p.MetadataDrift() && p.Version == nil {
		return nil
	}
	e := &catalog.Edit{Version: log.Version, CommitTimestampMs: log.CommitTimestamp}
	if p.Schema != nil {
		cols := p.Schema.Log
		e.Columns = &cols
		for _, c := range p.Changes() {
			if from, to, ok := c.Rename(); ok {
				if e.Renames == nil {
					e.Renames = map[string]string{}
				}
				e.Renames[from] = to
			}
		}
	}
	if p.Partitioning != nil {
		e.PartitionColumns, e.SetPartitioning = nonNil(p.Partitioning.Log), true
	}
	if p.Protocol != nil {
		pr := p.Protocol.Log
		e.Protocol = &pr
	}
	if p.Properties != nil {
		if len(p.Properties.Set) > 0 {
			e.SetProperties = p.Properties.Set
		}
		if len(p.Properties.Remove) > 0 {
			e.RemoveProperties = p.Properties.Remove
		}
	}
	if p.Clustering != nil {
		e.Clustering, e.SetClustering = p.Clustering.Log, true
	}
	if p.Comment != nil {
		c := p.Comment.Log
		e.Comment = &c
	}
	return e
}
