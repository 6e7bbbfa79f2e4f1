package deltalog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// The wording of refusals a newcomer meets first, pinned.
func TestRefusalWording(t *testing.T) {
	corpus := func(name string) string { return filepath.Join(testcorpus.Dir(t), name) }
	missing := filepath.Join(t.TempDir(), "no-such-table")
	for _, tc := range []struct {
		url      string
		sentinel error
		want     string
		not      []string
	}{
		{missing, ErrNotATable,
			"deltalog: open " + missing + ": not a Delta table: directory " + missing + " does not exist", []string{"::"}},
		{corpus("versions-not-contiguous"), ErrVersionGap,
			"_delta_log/00000000000000000001.json (version 1): log versions are not contiguous: commit 1 is missing: " +
				"the log has no checkpoint, so every commit from 0 to the latest version 2 is needed",
			[]string{"checkpoint -1"}},
		{corpus("err-table_c-gap-after-checkpoint"), ErrVersionGap,
			"commit 12 is missing between checkpoint 10 and latest version 13", nil},
		{corpus("deltalog-state-reconstruction-from-checkpoint-missing-protocol"), ErrMissingProtocol,
			"(version 10): no protocol action found: none from 00000000000000000010.checkpoint.parquet through version 10; " +
				"every table's log must hold one (its reader and writer requirements)",
			[]string{"no protocol action in the log segment"}},
		{corpus("deltalog-state-reconstruction-without-metadata"), ErrMissingMetadata,
			"no metaData action found: none from 00000000000000000000.json through version 0; every table's log must hold one (its schema and properties)",
			[]string{"no metaData action in the log segment"}},
	} {
		err := loadErr(t, tc.url, Credentials{})
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: error %v is not %v", tc.url, err, tc.sentinel)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %s\nwant …%s…", tc.url, err, tc.want)
		}
		for _, n := range tc.not {
			if strings.Contains(err.Error(), n) {
				t.Errorf("%s: error still says %q: %s", tc.url, n, err)
			}
		}
	}
}

// LogError never prints an empty part ("open x:: reason").
func TestLogErrorHasNoEmptyParts(t *testing.T) {
	for _, tc := range []struct {
		e    LogError
		want string
	}{
		{LogError{Op: "open", Table: "s3://b/t", Version: -1, Err: errors.New("boom")}, "deltalog: open s3://b/t: boom"},
		{LogError{Op: "load", Table: "t", Version: 3, Err: errors.New("boom")}, "deltalog: load t: (version 3): boom"},
		{LogError{Op: "load", Table: "t", Version: 3, File: "_delta_log/x.json", Line: 2, Err: errors.New("boom")},
			"deltalog: load t: _delta_log/x.json:2 (version 3): boom"},
		{LogError{Op: "load", Version: -1, File: "_delta_log/"}, "deltalog: load: _delta_log/"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
