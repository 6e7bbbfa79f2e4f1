package location

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/data/t/", "file:///data/t"},
		{"file:/data/t", "file:///data/t"},
		{"file:///data//t//", "file:///data/t"},
		{"s3://bucket/a/b/", "s3://bucket/a/b"},
		{"S3://bucket//a", "s3://bucket/a"},
		{"abfss://c@acct.dfs.core.windows.net/t", "abfss://c@acct.dfs.core.windows.net/t"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonical(t *testing.T) {
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
		if got := Canonical(tt.in); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := Canonical(tt.want); again != tt.want {
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
		got := ObjectRoot(tt.in)
		if got != tt.want {
			t.Errorf("ObjectRoot(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := ObjectRoot(got); again != got {
			t.Errorf("not a fixed point: %q -> %q -> %q", tt.in, got, again)
		}
	}
	// A catalog location is a URL: it is decoded once, to the raw key an
	// event names.
	if got, want := Canonical("s3://b/w/t%2541"), ObjectRoot("s3://b/w/t%41"); got != want {
		t.Errorf("catalog location %q and event root %q do not match", got, want)
	}
}
