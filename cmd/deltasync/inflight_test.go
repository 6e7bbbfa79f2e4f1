package main

import (
	"strings"
	"testing"
)

// TestStorageInFlightConfig: storage.max_in_flight and
// storage.max_in_flight_per_bucket are checked by check-config (positive,
// the per-bucket one at most the process's) and default to deltalog's.
func TestStorageInFlightConfig(t *testing.T) {
	const head = "catalog:\n  url: http://x/api/2.1/unity-catalog\nstorage:\n"
	for _, c := range []struct {
		yaml, want string
	}{
		{"  max_in_flight: 0\n", "storage.max_in_flight 0: must be positive"},
		{"  max_in_flight_per_bucket: -1\n", "storage.max_in_flight_per_bucket -1: must be positive"},
		{"  max_in_flight: 8\n  max_in_flight_per_bucket: 9\n", "storage.max_in_flight_per_bucket 9: must be positive and at most storage.max_in_flight (8)"},
	} {
		code, _, errOut := runCLI(t, nil, "check-config", "--config", writeFile(t, t.TempDir(), "bad.yaml", head+c.yaml))
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, want 1 with %q\n%s", c.yaml, code, c.want, errOut)
		}
	}
	code, _, errOut := runCLI(t, nil, "check-config", "--config", writeFile(t, t.TempDir(), "ok.yaml", head+"  max_in_flight: 512\n  max_in_flight_per_bucket: 128\ntables:\n  - include: [\"a.b.*\"]\n"))
	if code != 0 {
		t.Errorf("valid limits: exit %d\n%s", code, errOut)
	}
}
