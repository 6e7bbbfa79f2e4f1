package events

import (
	"slices"
	"testing"

	"github.com/deltasync/deltasync/sync/location"
)

func TestLogObjectOf(t *testing.T) {
	tests := []struct {
		store, key string
		ok         bool
		root, kind string
		version    int64
		triggers   bool
	}{
		{"s3://b", "w/t/_delta_log/00000000000000000042.json", true, "s3://b/w/t", "commit", 42, true},
		{"s3://b", "_delta_log/00000000000000000003.json", true, "s3://b", "commit", 3, true},
		{"s3://b", "w/t/_delta_log/00000000000000000010.checkpoint.parquet", true, "s3://b/w/t", "checkpoint", 10, true},
		{"s3://b", "w/t/_delta_log/00000000000000000010.checkpoint.0000000001.0000000002.parquet", true, "s3://b/w/t", "multi-part checkpoint", 10, true},
		{"s3://b", "w/t/_delta_log/00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", true, "s3://b/w/t", "v2 checkpoint", 10, true},
		{"s3://b", "w/t/_delta_log/_last_checkpoint", true, "s3://b/w/t", "_last_checkpoint", 0, true},
		{"s3://b", "w/t/_delta_log/_staged_commits/00000000000000000011.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json", true, "s3://b/w/t", "staged commit", 11, true},
		{"s3://b", "w/t/_delta_log/00000000000000000011.crc", true, "s3://b/w/t", "checksum", 11, false},
		{"s3://b", "w/t/_delta_log/00000000000000000001.00000000000000000009.compacted.json", true, "s3://b/w/t", "compaction", 1, false},
		{"s3://b", "w/t/_delta_log/.00000000000000000011.json.tmp", true, "s3://b/w/t", "", 0, false},
		// Event keys are raw: a literal '%' in a key is not decoded again.
		{"s3://b", "w/t%41/_delta_log/00000000000000000042.json", true, "s3://b/w/t%41", "commit", 42, true},
		{"s3://b", "w/my t/_delta_log/00000000000000000042.json", true, "s3://b/w/my t", "commit", 42, true},
		{"s3://b", "w/t/part-00000-1.snappy.parquet", false, "", "", 0, false},
		{"s3://b", "w/t/_delta_log_backup/x", false, "", "", 0, false},
	}
	for _, tt := range tests {
		o, ok := logObjectOf(ObjectEvent{Store: tt.store, Key: tt.key})
		if ok != tt.ok || o.Root != tt.root || o.File.Kind != tt.kind || o.File.Version != tt.version || o.Triggers() != tt.triggers {
			t.Errorf("%s: got %+v ok=%v triggers=%v", tt.key, o, ok, o.Triggers())
		}
	}
}

// Each sample's object is found under the catalog location the table was
// registered with, whichever spelling the catalog uses.
func TestMatchSamplesToCatalogLocations(t *testing.T) {
	ix := location.Index{}
	for loc, table := range map[string]string{
		"s3a://lake-prod/warehouse/sales/daily%20orders/":                   "main.sales.daily_orders",
		"s3://lake-prod/warehouse/sales/orders":                             "main.sales.orders",
		"s3://lake/warehouse/sales/daily orders":                            "minio.sales.daily_orders",
		"gs://lake-prod/warehouse/sales/orders":                             "gcp.sales.orders",
		"abfss://warehouse@lakeprod.dfs.core.windows.net/sales/orders":      "az.sales.orders",
		"azblob://warehouse/sales/daily%20orders":                           "az.sales.daily_orders",
		"abfss://warehouse@otheraccount.dfs.core.windows.net/sales/orders2": "az.other.orders",
	} {
		ix.Add(location.Canonical(loc), table)
	}
	tests := []struct {
		sample, attrs string
		want          []string
	}{
		{"s3-put.json", "", []string{"main.sales.daily_orders"}},
		{"s3-sns.json", "", []string{"main.sales.daily_orders"}},
		{"eventbridge-object-created.json", "", []string{"main.sales.orders"}},
		{"minio-put.json", "", []string{"minio.sales.daily_orders"}},
		{"gcs-finalize.json", "gcs-finalize.attrs.json", []string{"gcp.sales.orders"}},
		{"eventgrid-blobcreated.json", "", []string{"az.sales.orders"}},
		{"eventgrid-adls-flush.json", "", []string{"az.sales.daily_orders"}},
		{"cloudevents-blobcreated.json", "", []string{"az.sales.orders"}},
	}
	for _, tt := range tests {
		var attrs map[string]string
		if tt.attrs != "" {
			attrs = sampleAttrs(t, tt.attrs)
		}
		evs, err := ParseNotification(readSample(t, tt.sample), attrs)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%s: %v %v", tt.sample, evs, err)
		}
		o, ok := logObjectOf(evs[0])
		if !ok || !o.Triggers() {
			t.Fatalf("%s: %+v not a triggering log object", tt.sample, o)
		}
		if got := ix.Lookup(o.Root); !slices.Equal(got, tt.want) {
			t.Errorf("%s: root %s -> %v, want %v", tt.sample, o.Root, got, tt.want)
		}
	}
	if got := ix.Lookup(location.Canonical("s3://lake-prod/warehouse/sales/unknown")); got != nil {
		t.Errorf("unknown root matched %v", got)
	}
	ix.Remove(location.Canonical("s3://lake-prod/warehouse/sales/orders"), "main.sales.orders")
	if got := ix.Lookup("s3://lake-prod/warehouse/sales/orders"); got != nil {
		t.Errorf("after remove: %v", got)
	}
}
