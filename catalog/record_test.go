package catalog

import "testing"

// TestSetFromParameters: what a parameter-map record says of the log
// becomes the neutral Record's fields; what it does not say stays unset,
// and what it says badly is not guessed.
func TestSetFromParameters(t *testing.T) {
	props := map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "2", "clusteringColumns": `[["id"]]`}
	var r Record
	r.SetFromParameters(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`, true, props, 7, 1700000000000)
	if len(r.Columns.Fields) != 1 || r.Protocol == nil || r.Protocol.MinWriterVersion != 2 || len(r.Clustering) != 1 ||
		r.LastCommitVersion == nil || *r.LastCommitVersion != 7 || r.LastCommitTimestampMs == nil || *r.LastCommitTimestampMs != 1700000000000 {
		t.Errorf("record %+v: want one column, protocol 1/2, clustered by id, watermark 7", r)
	}

	var bare Record
	bare.SetFromParameters(`{"not a schema`, true, map[string]string{"clusteringColumns": "{"}, -1, -1)
	if len(bare.Columns.Fields) != 0 || bare.Protocol != nil || bare.LastCommitVersion != nil || bare.LastCommitTimestampMs != nil {
		t.Errorf("record %+v: want no columns, protocol or watermark from parameters that hold none", bare)
	}
	if bare.ClusteringProblem == "" {
		t.Error("an unreadable clustering property: want ClusteringProblem set")
	}
}
