package main

import (
	"strings"
	"testing"
)

// TestStoragePolicyErrorsNameTheirKeys: sync reports a bad allow-list
// pattern or bucket by its position (sync.PolicyError); check-config names
// each by the key the user wrote, or by the flag that replaced it.
func TestStoragePolicyErrorsNameTheirKeys(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "c.yaml", `
catalog: {url: "http://c/api/2.1/unity-catalog"}
tables: [{include: ["a.*.*"]}]
storage:
  allowed_locations: ["ftp://x/**", "s3://b/t?x=1", "s3:///**"]
  buckets:
    - location: s3://b/path
    - location: s3://c
      options: {bogus: "1"}
    - location: file:///x
    - location: s3://c
`)
	code, _, errOut := runCLI(t, nil, "check-config", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{
		`storage.allowed_locations "ftp://x/**": `,
		`storage.allowed_locations "s3://b/t?x=1": `,
		`storage.allowed_locations "s3:///**": `,
		`storage.buckets[0].location "s3://b/path": want scheme://bucket without a path`,
		`storage.buckets[1].options.bogus: unknown for s3://c (want one of region, endpoint,`,
		`storage.buckets[2].location "file:///x": file locations take no options`,
		`storage.buckets[3].location "s3://c": listed twice`,
	} {
		if !strings.Contains(errOut, "  - "+want) {
			t.Errorf("check-config does not say %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "bucket 1 option") || strings.Contains(errOut, "allowed location 0") {
		t.Errorf("the library's own naming leaked into the config's errors:\n%s", errOut)
	}
	_, _, errOut = runCLI(t, nil, "check-config", "--config", cfg, "--allow-location", "ftp://y/**")
	if !strings.Contains(errOut, `  - --allow-location "ftp://y/**": `) {
		t.Errorf("a pattern from --allow-location is not named by the flag:\n%s", errOut)
	}
}
