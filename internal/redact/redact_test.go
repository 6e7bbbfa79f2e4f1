package redact

import "testing"

// TestLocation moved here from deltalog (TestRedactURL).
func TestLocation(t *testing.T) {
	tests := map[string]string{
		"/data/t":                             "/data/t",
		"s3://b/t?endpoint=http://x&region=r": "s3://b/t",
		"azblob://c/t?sig=secret":             "azblob://c/t",
		"gs://user:pw@b/t":                    "gs://b/t",
		"file:///tmp/x":                       "file:///tmp/x",
		"s3://b/t#frag":                       "s3://b/t",
		"s3://b/%zz?sig=secret":               "s3://b/%zz",
	}
	for in, want := range tests {
		if got := Location(in); got != want {
			t.Errorf("Location(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := map[string]string{
		"": "",
		"https://uc.example.com/api/2.1/unity-catalog":                "https://uc.example.com/api/2.1/unity-catalog",
		"https://u:p@uc.example.com/x/api/2.1/unity-catalog/":         "https://REDACTED@uc.example.com/REDACTED/api/2.1/unity-catalog",
		"https://hc-ping.com/6f1c-secret-uuid":                        "https://hc-ping.com/REDACTED",
		"awssqs://sqs.us-east-2.amazonaws.com/123/q?region=us-east-2": "awssqs://sqs.us-east-2.amazonaws.com/REDACTED?region=REDACTED",
		"https://host/?token=abc&x=1":                                 "https://host?token=REDACTED&x=REDACTED",
		"://bad":                                                      "[REDACTED]",
	}
	for in, want := range tests {
		if got := Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}
