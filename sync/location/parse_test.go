package location

import (
	"strings"
	"testing"
)

// The Hadoop spellings Spark and Databricks write name the same places as
// the plain ones, for the allow-list and for opening.
func TestParseHadoopForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"file:/data/t", "file:///data/t"},
		{"file:///data/t/", "file:///data/t"},
		{"file://localhost/data//t", "file:///data/t"},
		{"/data/t", "file:///data/t"},
		{"s3a://Lake/w/t/", "s3://lake/w/t"},
		{"s3n://lake/w/t", "s3://lake/w/t"},
		{"s3://lake/w/t", "s3://lake/w/t"},
		{"abfss://cont@acct01.dfs.core.windows.net/w/t", "abfss://cont@acct01.dfs.core.windows.net/w/t"},
		{"abfs://cont@acct01.dfs.core.windows.net/w/t", "abfss://cont@acct01.dfs.core.windows.net/w/t"},
		{"gs://b/t", "gs://b/t"},
		{"azblob://c/t", "azblob://c/t"},
	}
	for _, tt := range tests {
		l, err := Parse(tt.in)
		if err != nil || l.String() != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, l, err, tt.want)
		}
		// The normalisation the diff uses agrees for the same-scheme forms.
		if l.Scheme == "file" && Normalize(tt.in) != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, Normalize(tt.in), tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"s3://bkt/t?endpoint=http://127.0.0.1:9&region=us-east-1&use_path_style=true",
		"s3://bkt/t?",
		"s3://bkt/t#frag",
		"azblob://c/t?storage_account=evil&domain=evil.example",
		"s3://bkt:9000/t",
		"s3://user:pw@bkt/t",
		"abfss://c@evil.example/t",
		"abfss://c:pw@acct01.dfs.core.windows.net/t",
		"file://evil.example/etc",
		"file:etc",
		"file:///data/../etc",
		"s3://bkt/a/%2e%2e/b",
		"http://127.0.0.1:9/t",
		"mem://x/t",
		"",
		"s3://bkt/t\nx",
		`file:///data\t`,
	} {
		if l, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", in, l)
		}
	}
}

// TestParseBucketLength pins the bucket-name bound (255 characters,
// checked apart from the character class).
func TestParseBucketLength(t *testing.T) {
	ok := "b" + strings.Repeat("x", 254)
	if _, err := Parse("s3://" + ok + "/t"); err != nil {
		t.Errorf("a 255-character bucket: %v", err)
	}
	if l, err := Parse("s3://" + ok + "x/t"); err == nil {
		t.Errorf("a 256-character bucket parsed as %q", l)
	}
	if l, err := Parse("abfss://" + ok + "x@acct01.dfs.core.windows.net/t"); err == nil {
		t.Errorf("a 256-character container parsed as %q", l)
	}
	for _, bad := range []string{"s3://-b/t", "s3://_b/t", "s3://b%21/t"} {
		if l, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", bad, l)
		}
	}
}
