package glue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want Config
	}{
		{"glue://eu-west-1", Config{Region: "eu-west-1"}},
		{"glue://?region=us-east-1", Config{Region: "us-east-1"}},
		{"glue://us-gov-west-1?region=us-gov-west-1&catalog_id=123456789012", Config{Region: "us-gov-west-1", CatalogID: "123456789012"}},
		{"glue://us-east-1?endpoint=http://127.0.0.1:5000&archive=true&max_attempts=8",
			Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:5000", ArchiveVersions: true, RetryMaxAttempts: 8}},
	} {
		got, err := ParseURL(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.url, d)
		}
		if !got.SkipArchive() == !tc.want.ArchiveVersions {
			t.Errorf("%s: SkipArchive %v with ArchiveVersions %v", tc.url, got.SkipArchive(), got.ArchiveVersions)
		}
	}
}

func TestParseURLErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"glue://", "region: missing"},
		{"glue://EU", `region "EU"`},
		{"glue://eu-west-1?region=us-east-1", "region: host"},
		{"glue://eu-west-1?catalog_id=12", `catalog_id "12"`},
		{"glue://eu-west-1?endpoint=ftp://x", `endpoint "ftp://x"`},
		{"glue://eu-west-1?archive=maybe", `archive "maybe"`},
		{"glue://eu-west-1?max_attempts=0", `max_attempts "0"`},
		{"glue://eu-west-1?regoin=x", `unknown parameter "regoin"`},
		{"glue://eu-west-1/db", "no user, port, path"},
		{"glue://eu-west-1:443", "no user, port, path"},
		{"thrift://h:9083", `scheme "thrift"`},
		{"glue://eu-west-1?region=a&region=b", "given 2 times"},
	} {
		_, err := ParseURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.url) {
			t.Errorf("%s: err = %v, want one naming the URL and %q", tc.url, err, tc.want)
		}
	}
}

func TestSkipArchiveByDefault(t *testing.T) {
	if !(Config{}).SkipArchive() {
		t.Error("the zero Config does not skip archiving: every write would add a table version")
	}
}
