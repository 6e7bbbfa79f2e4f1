package deltalog

import (
	"context"
	"testing"

	"gocloud.dev/blob"
)

// contractSnapshot is what Load must return identically on every backend.
type contractSnapshot struct {
	Version         int64
	Protocol        Protocol
	Metadata        Metadata
	Schema          *StructType
	CommitTimestamp int64
	CatalogManaged  bool
	Domains         map[string]string
}

// contractLoad loads the table in b (rooted at the table) and returns what
// must be equal on every backend.
func contractLoad(t *testing.T, name string, b *blob.Bucket) (any, bool) {
	t.Helper()
	snap, err := NewTable(b, name).Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Errorf("%s: Load: %v", name, err)
		return nil, false
	}
	return contractSnapshot{
		Version: snap.Version, Protocol: snap.Protocol, Metadata: snap.Metadata, Schema: snap.Schema,
		CommitTimestamp: snap.CommitTimestamp, CatalogManaged: snap.CatalogManaged, Domains: snap.Domains,
	}, true
}
