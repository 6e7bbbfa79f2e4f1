package sync

import (
	"slices"
	"testing"
)

func TestCanonicalLocation(t *testing.T) {
	tests := []struct{ in, want string }{
		{"s3://Lake-Prod/warehouse/sales/orders/", "s3://lake-prod/warehouse/sales/orders"},
		{"s3a://lake-prod/warehouse//sales/orders", "s3://lake-prod/warehouse/sales/orders"},
		{"s3n://lake-prod/warehouse/sales/orders?region=us-west-2", "s3://lake-prod/warehouse/sales/orders"},
		{"s3://lake-prod/warehouse/sales/daily%20orders", "s3://lake-prod/warehouse/sales/daily orders"},
		{"gs://lake-prod/t", "gs://lake-prod/t"},
		{"gcs://lake-prod/t/", "gs://lake-prod/t"},
		{"abfss://warehouse@lakeprod.dfs.core.windows.net/sales/orders", "az://lakeprod/warehouse/sales/orders"},
		{"abfs://warehouse@LakeProd.dfs.core.windows.net/sales/orders/", "az://lakeprod/warehouse/sales/orders"},
		{"wasbs://warehouse@lakeprod.blob.core.windows.net/sales/orders", "az://lakeprod/warehouse/sales/orders"},
		{"azblob://warehouse/sales/orders", "az://*/warehouse/sales/orders"},
		{"az://lakeprod/warehouse/sales/orders", "az://lakeprod/warehouse/sales/orders"},
		{"file:///data/t/", "file:///data/t"},
		{"/data/t", "file:///data/t"},
		{"file:/data/my%20t", "file:///data/my t"},
	}
	for _, tt := range tests {
		if got := CanonicalLocation(tt.in); got != tt.want {
			t.Errorf("CanonicalLocation(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := CanonicalLocation(tt.want); again != tt.want {
			t.Errorf("not idempotent: %q -> %q", tt.want, again)
		}
	}
}

// TestCanonicalObjectRootFixedPoint holds inputs fuzzing found where the
// canonical form was not its own canonical form ("gs:// " became "gs:://").
func TestCanonicalObjectRootFixedPoint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gs:// ", "gs:"},
		{"gs:", "gs:"},
		{"abfs://@", "az:"},
		{"abfs://@/x", "az:///x"},
		{"wasb://@a.b/", "az://a"},
		{"s3://b/t?x/", "s3://b/t"},
		{"s3://b/t%41", "s3://b/t%41"},
	}
	for _, tt := range tests {
		got := canonicalObjectRoot(tt.in)
		if got != tt.want {
			t.Errorf("canonicalObjectRoot(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := canonicalObjectRoot(got); again != got {
			t.Errorf("not a fixed point: %q -> %q -> %q", tt.in, got, again)
		}
	}
	// A catalog location is a URL: it is decoded once, to the raw key an
	// event names.
	if got, want := CanonicalLocation("s3://b/w/t%2541"), canonicalObjectRoot("s3://b/w/t%41"); got != want {
		t.Errorf("catalog location %q and event root %q do not match", got, want)
	}
}

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
	ix := locationIndex{}
	for loc, table := range map[string]string{
		"s3a://lake-prod/warehouse/sales/daily%20orders/":                   "main.sales.daily_orders",
		"s3://lake-prod/warehouse/sales/orders":                             "main.sales.orders",
		"s3://lake/warehouse/sales/daily orders":                            "minio.sales.daily_orders",
		"gs://lake-prod/warehouse/sales/orders":                             "gcp.sales.orders",
		"abfss://warehouse@lakeprod.dfs.core.windows.net/sales/orders":      "az.sales.orders",
		"azblob://warehouse/sales/daily%20orders":                           "az.sales.daily_orders",
		"abfss://warehouse@otheraccount.dfs.core.windows.net/sales/orders2": "az.other.orders",
	} {
		ix.add(CanonicalLocation(loc), table)
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
		if got := ix.lookup(o.Root); !slices.Equal(got, tt.want) {
			t.Errorf("%s: root %s -> %v, want %v", tt.sample, o.Root, got, tt.want)
		}
	}
	if got := ix.lookup(CanonicalLocation("s3://lake-prod/warehouse/sales/unknown")); got != nil {
		t.Errorf("unknown root matched %v", got)
	}
	ix.remove(CanonicalLocation("s3://lake-prod/warehouse/sales/orders"), "main.sales.orders")
	if got := ix.lookup("s3://lake-prod/warehouse/sales/orders"); got != nil {
		t.Errorf("after remove: %v", got)
	}
}
