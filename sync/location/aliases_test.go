package location

import "testing"

// TestEverySpelling is the one table of the spellings a location comes in
// and what each form makes of it: Normalize (the diff's), Parse (what the
// storage policy opens; "error" when refused) and Canonical (what events
// are matched in). An aliasing fix belongs here, with a row.
func TestEverySpelling(t *testing.T) {
	tests := []struct{ in, normal, parsed, canon string }{
		// s3 and its Hadoop aliases
		{"s3://lake/w/t", "s3://lake/w/t", "s3://lake/w/t", "s3://lake/w/t"},
		{"s3a://Lake/w/t/", "s3a://Lake/w/t", "s3://lake/w/t", "s3://lake/w/t"},
		{"s3n://lake/w/t", "s3n://lake/w/t", "s3://lake/w/t", "s3://lake/w/t"},
		{"S3://lake//w/t", "s3://lake/w/t", "s3://lake/w/t", "s3://lake/w/t"},
		{"s3://lake/w/t///", "s3://lake/w/t", "s3://lake/w/t", "s3://lake/w/t"},
		{"s3://lake/w/t?region=x", "s3://lake/w/t?region=x", "error", "s3://lake/w/t"},
		{"s3://lake/w/daily%20t", "s3://lake/w/daily%20t", "s3://lake/w/daily t", "s3://lake/w/daily t"},
		// Google Cloud Storage
		{"gs://lake/t/", "gs://lake/t", "gs://lake/t", "gs://lake/t"},
		{"gcs://lake/t", "gcs://lake/t", "error", "gs://lake/t"},
		// Azure
		{"abfss://c@acct01.dfs.core.windows.net/t/", "abfss://c@acct01.dfs.core.windows.net/t", "abfss://c@acct01.dfs.core.windows.net/t", "az://acct01/c/t"},
		{"abfs://c@acct01.dfs.core.windows.net/t", "abfs://c@acct01.dfs.core.windows.net/t", "abfss://c@acct01.dfs.core.windows.net/t", "az://acct01/c/t"},
		{"wasbs://c@acct01.blob.core.windows.net/t", "wasbs://c@acct01.blob.core.windows.net/t", "error", "az://acct01/c/t"},
		{"wasb://c@acct01.blob.core.windows.net/t", "wasb://c@acct01.blob.core.windows.net/t", "error", "az://acct01/c/t"},
		{"azblob://c/t/", "azblob://c/t", "azblob://c/t", "az://*/c/t"},
		// local paths
		{"/data/t/", "file:///data/t", "file:///data/t", "file:///data/t"},
		{"file:/data/t", "file:///data/t", "file:///data/t", "file:///data/t"},
		{"file:///data//t//", "file:///data/t", "file:///data/t", "file:///data/t"},
		{"file://localhost/data/t", "file:///data/t", "file:///data/t", "file:///data/t"},
		// A host is refused by Parse; Normalize and Canonical read it as a path.
		{"file://host/data/t", "file:///host/data/t", "error", "file:///host/data/t"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.normal {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.normal)
		}
		l, err := Parse(tt.in)
		got := l.String()
		if err != nil {
			got = "error"
		}
		if got != tt.parsed {
			t.Errorf("Parse(%q) = %q (%v), want %q", tt.in, got, err, tt.parsed)
		}
		if got := Canonical(tt.in); got != tt.canon {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.canon)
		}
	}
}
