package catalog

import "encoding/json"

// Domain names of the Delta log's domain metadata a catalog keeps.
const (
	DomainClustering  = "delta.clustering"
	DomainRowTracking = "delta.rowTracking"
)

// DomainMetadata is what a catalog keeps of a table's domain metadata: the
// clustering columns and the row-tracking high-water mark. Its JSON is the
// Delta API's DeltaDomainMetadataUpdates (catalog/uc's CreateTableRequest;
// its SetDomainMetadata action has the same fields).
type DomainMetadata struct {
	Clustering         *[][]string
	RowIDHighWaterMark *int64
}

type clusteringWire struct {
	ClusteringColumns [][]string `json:"clusteringColumns"`
}

type rowTrackingWire struct {
	RowIDHighWaterMark int64 `json:"rowIdHighWaterMark"`
}

type domainWire struct {
	Clustering  *clusteringWire  `json:"delta.clustering,omitempty"`
	RowTracking *rowTrackingWire `json:"delta.rowTracking,omitempty"`
}

// MarshalJSON writes {"delta.clustering":{…},"delta.rowTracking":{…}}.
func (d DomainMetadata) MarshalJSON() ([]byte, error) {
	var w domainWire
	if d.Clustering != nil {
		cols := *d.Clustering
		if cols == nil {
			cols = [][]string{}
		}
		w.Clustering = &clusteringWire{ClusteringColumns: cols}
	}
	if d.RowIDHighWaterMark != nil {
		w.RowTracking = &rowTrackingWire{RowIDHighWaterMark: *d.RowIDHighWaterMark}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form.
func (d *DomainMetadata) UnmarshalJSON(b []byte) error {
	var w domainWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = DomainMetadata{}
	if w.Clustering != nil {
		c := w.Clustering.ClusteringColumns
		d.Clustering = &c
	}
	if w.RowTracking != nil {
		v := w.RowTracking.RowIDHighWaterMark
		d.RowIDHighWaterMark = &v
	}
	return nil
}
