package deltalog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gocloud.dev/blob/fileblob"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// TestLocalListMatchesFileblob: a local table's log is listed by
// localRoot.listLog, not fileblob. For every corpus table and every
// start-after position (none, each key, past the end) it returns the files
// fileblob's listing returns, with the same sizes and modification times.
func TestLocalListMatchesFileblob(t *testing.T) {
	ctx := context.Background()
	type entry struct {
		Key     string
		Size    int64
		ModTime int64
	}
	for _, row := range readManifest(t) {
		dir := filepath.Join(testcorpus.Dir(t), row.Name)
		fb, err := fileblob.OpenBucket(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		root := &localRoot{dir: dir}
		all, err := listLogPages(ctx, nil, fb, "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		starts := []string{"", logDir + "~"}
		for _, o := range all {
			starts = append(starts, o.Key)
		}
		for _, start := range starts {
			want, err := listLogPages(ctx, nil, fb, "", start, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := root.listLog(start)
			if err != nil {
				t.Fatalf("%s after %q: %v", row.Name, start, err)
			}
			var w, g []entry
			for _, o := range want {
				if !o.IsDir {
					w = append(w, entry{o.Key, o.Size, o.ModTime.UnixNano()})
				}
			}
			for _, o := range got {
				if o.IsDir {
					t.Errorf("%s: listLog returned directory %s", row.Name, o.Key)
				}
				g = append(g, entry{o.Key, o.Size, o.ModTime.UnixNano()})
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s after %q (-fileblob +listLog):\n%s", row.Name, start, diff)
			}
		}
		_ = fb.Close()
	}

	// A table directory without _delta_log, and a missing directory, list
	// nothing and no error, as fileblob.
	empty := t.TempDir()
	for _, dir := range []string{empty, filepath.Join(empty, "missing")} {
		if got, err := (&localRoot{dir: dir}).listLog(""); err != nil || len(got) != 0 {
			t.Errorf("%s: %v, %v; want nothing", dir, got, err)
		}
	}
}
