package testcorpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadTreeAndCopyTree: CopyTree copies the kept files with their
// content, ReadTree reports them in lexical order with slash keys.
func TestReadTreeAndCopyTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"_delta_log/00000000000000000001.json":              "b",
		"_delta_log/00000000000000000000.json":              "a",
		"_delta_log/_staged_commits/00000000000000000002.x": "c",
		"part-0.parquet": "data",
	})
	CopyTree(t, src, dst, func(rel string) bool { return !strings.HasSuffix(rel, ".parquet") })
	var keys []string
	got := map[string]string{}
	ReadTree(t, dst, func(key string, data []byte) error {
		keys = append(keys, key)
		got[key] = string(data)
		return nil
	})
	want := map[string]string{
		"_delta_log/00000000000000000000.json":              "a",
		"_delta_log/00000000000000000001.json":              "b",
		"_delta_log/_staged_commits/00000000000000000002.x": "c",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("copied tree (-want +got):\n%s", d)
	}
	wantOrder := []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/_staged_commits/00000000000000000002.x"}
	if d := cmp.Diff(wantOrder, keys); d != "" {
		t.Errorf("ReadTree order (-want +got):\n%s", d)
	}
}
