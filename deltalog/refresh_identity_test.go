package deltalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// identityV0 is a version 0 with table id id and the given int columns.
func identityV0(ts int64, id string, cols ...string) string {
	var fields []string
	for _, c := range cols {
		fields = append(fields, fmt.Sprintf(`{\"name\":\"%s\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}`, c))
	}
	md := fmt.Sprintf(`{"metaData":{"id":"%s","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[%s]}","partitionColumns":[],"configuration":{}}}`,
		id, strings.Join(fields, ","))
	return commitText(ts, `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n", md+"\n")
}

// columnsOf returns the snapshot's top-level column names.
func columnsOf(t *testing.T, s *Snapshot) []string {
	t.Helper()
	schema := s.Schema
	if schema == nil {
		var err error
		if schema, err = ParseSchema(s.Metadata.SchemaString); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, f := range schema.Fields {
		out = append(out, f.Name)
	}
	return out
}

// TestRefreshSeesLogWrittenAgain: a log deleted and written again at the
// same path, reusing its version numbers, is not the log the previous
// snapshot read. Refresh tells it from the listing of the newest commit
// prev read (size, modification time, content hash) and from the
// metaData id of new commits, and loads it in full, from a fresh snapshot
// and from a compact one alike.
func TestRefreshSeesLogWrittenAgain(t *testing.T) {
	ctx := context.Background()
	wipe := func(b *blob.Bucket) {
		it := b.List(nil)
		for {
			o, err := it.Next(ctx)
			if err != nil {
				break
			}
			_ = b.Delete(ctx, o.Key)
		}
	}
	cases := []struct {
		name    string
		before  []string // commits 0, 1, ... of the first log
		after   []string // commits of the log that replaces it (nil: none)
		append  []string // commits added after before (when after is nil)
		want    RefreshResult
		version int64
		cols    []string // the columns of a rebuilt snapshot
	}{
		{name: "v0 written again with an extra column",
			before: []string{identityV0(100, "a", "x")}, after: []string{identityV0(200, "b", "x", "y")},
			want: Rebuilt, version: 0, cols: []string{"x", "y"}},
		{name: "v0 written again, same size, other content",
			before: []string{identityV0(100, "a", "x")}, after: []string{identityV0(200, "b", "z")},
			want: Rebuilt, version: 0, cols: []string{"z"}},
		{name: "v0..v2 written again as v0..v3 with other columns",
			before: []string{identityV0(100, "a", "x"), commitText(110, addLine), commitText(120, addLine)},
			after:  []string{identityV0(200, "b", "p", "q"), commitText(210, addLine), commitText(220, addLine), commitText(230, addLine)},
			want:   Rebuilt, version: 3, cols: []string{"p", "q"}},
		{name: "new commit with another table's metaData",
			before: []string{identityV0(100, "a", "x")},
			append: []string{strings.Replace(identityV0(200, "b", "w"), `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n", "", 1)},
			want:   Rebuilt, version: 1, cols: []string{"w"}},
		{name: "same log, one commit more",
			before: []string{identityV0(100, "a", "x")}, append: []string{commitText(110, addLine)},
			want: Advanced, version: 1},
		{name: "same log, nothing new",
			before: []string{identityV0(100, "a", "x")},
			want:   Unchanged, version: 0},
	}
	for _, tc := range cases {
		for _, compact := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/compact=%v", tc.name, compact), func(t *testing.T) {
				mb := memblob.OpenBucket(nil)
				defer mb.Close()
				for v, c := range tc.before {
					put(t, mb, commitKey(int64(v)), c)
				}
				tbl := NewTable(mb, "t")
				prev, err := tbl.Load(ctx, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if compact {
					prev = prev.Compact()
				}
				if tc.after != nil {
					wipe(mb)
					for v, c := range tc.after {
						put(t, mb, commitKey(int64(v)), c)
					}
				}
				for i, c := range tc.append {
					put(t, mb, commitKey(int64(len(tc.before)+i)), c)
				}
				snap, how, err := tbl.Refresh(ctx, prev, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if how != tc.want || snap.Version != tc.version {
					t.Errorf("refresh: %v at v%d, want %v at v%d", how, snap.Version, tc.want, tc.version)
				}
				if tc.want == Rebuilt {
					if got := columnsOf(t, snap); strings.Join(got, ",") != strings.Join(tc.cols, ",") {
						t.Errorf("columns %v, want the new log's %v", got, tc.cols)
					}
				}
			})
		}
	}
}

// TestRefreshSeesCommitTouchedAgain: on a local file system, which lists no
// content hash, a commit written again with the same bytes shows in its
// modification time alone; the same file untouched is Unchanged.
func TestRefreshSeesCommitTouchedAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	logDirPath := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDirPath, 0o755); err != nil {
		t.Fatal(err)
	}
	v0 := filepath.Join(logDirPath, fmt.Sprintf("%020d.json", 0))
	if err := os.WriteFile(v0, []byte(identityV0(100, "a", "x")), 0o644); err != nil {
		t.Fatal(err)
	}
	first := time.UnixMilli(1_700_000_000_000)
	if err := os.Chtimes(v0, first, first); err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	prev, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev = prev.Compact()
	if _, how, err := tbl.Refresh(ctx, prev, LoadOptions{}); err != nil || how != Unchanged {
		t.Fatalf("untouched: %v, %v; want unchanged", how, err)
	}
	later := first.Add(time.Second)
	if err := os.Chtimes(v0, later, later); err != nil {
		t.Fatal(err)
	}
	if _, how, err := tbl.Refresh(ctx, prev, LoadOptions{}); err != nil || how != Rebuilt {
		t.Fatalf("written again (same bytes, new mtime): %v, %v; want rebuilt", how, err)
	}
}
