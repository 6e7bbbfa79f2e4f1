package deltalog

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// seedKeys writes empty-ish objects at keys (relative to b).
func seedKeys(t *testing.T, b *blob.Bucket, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := b.WriteAll(context.Background(), k, []byte("x:"+k), nil); err != nil {
			t.Fatalf("seed %s: %v", k, err)
		}
	}
}

func listedKeys(objs []*blob.ListObject) []string {
	var out []string
	for _, o := range objs {
		k := o.Key
		if o.IsDir {
			k += "(dir)"
		}
		out = append(out, k)
	}
	return out
}

var storageTestKeys = []string{
	"_delta_log/00000000000000000000.json",
	"_delta_log/00000000000000000001.json",
	"_delta_log/00000000000000000002.checkpoint.parquet",
	"_delta_log/00000000000000000002.json",
	"_delta_log/00000000000000000003.json",
	"_delta_log/_last_checkpoint",
	"_delta_log/_staged_commits/00000000000000000004.uuid.json",
	"part-0000.parquet",
}

func TestListLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, k := range storageTestKeys {
		p := filepath.Join(dir, "tbl", filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := memblob.OpenBucket(nil)
	seedKeys(t, mem, prefixAll("a/tbl/", storageTestKeys)...)
	seedKeys(t, mem, "a/tbl2/_delta_log/00000000000000000000.json", "a/tbk/_delta_log/x.json")
	buckets := map[string]*blob.Bucket{
		"mem-prefixed": blob.PrefixedBucket(mem, "a/tbl/"),
	}
	fb, _, err := openBucket(ctx, filepath.Join(dir, "tbl"), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	buckets["file"] = fb
	for name, b := range buckets {
		t.Cleanup(func() { _ = b.Close() })
		tests := []struct {
			startAfter string
			want       []string
		}{
			{"", []string{
				"_delta_log/00000000000000000000.json",
				"_delta_log/00000000000000000001.json",
				"_delta_log/00000000000000000002.checkpoint.parquet",
				"_delta_log/00000000000000000002.json",
				"_delta_log/00000000000000000003.json",
				"_delta_log/_last_checkpoint",
				"_delta_log/_staged_commits/(dir)",
			}},
			{"_delta_log/00000000000000000001.json", []string{
				"_delta_log/00000000000000000002.checkpoint.parquet",
				"_delta_log/00000000000000000002.json",
				"_delta_log/00000000000000000003.json",
				"_delta_log/_last_checkpoint",
				"_delta_log/_staged_commits/(dir)",
			}},
			{"_delta_log/00000000000000000002.json", []string{
				"_delta_log/00000000000000000003.json",
				"_delta_log/_last_checkpoint",
				"_delta_log/_staged_commits/(dir)",
			}},
			{"_delta_log/_staged_commits/", nil},
		}
		for _, tc := range tests {
			t.Run(name+"/"+tc.startAfter, func(t *testing.T) {
				got, err := listLog(ctx, b, tc.startAfter)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, listedKeys(got)); diff != "" {
					t.Errorf("listLog(%q) mismatch (-want +got):\n%s", tc.startAfter, diff)
				}
			})
		}
	}
}

func prefixAll(p string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p + k
	}
	return out
}

func TestReadHelpers(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	content := "0123456789abcdef"
	seedKeys(t, b)
	if err := b.WriteAll(ctx, "_delta_log/x.parquet", []byte(content), nil); err != nil {
		t.Fatal(err)
	}
	got, err := readFile(ctx, b, "_delta_log/x.parquet")
	if err != nil || string(got) != content {
		t.Fatalf("readFile = %q, %v", got, err)
	}
	if _, err := readFile(ctx, b, "_delta_log/missing.json"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("readFile(missing) error = %v, want NotFound", err)
	}
	for _, size := range []int64{-1, int64(len(content))} {
		ra, n, err := newReaderAt(ctx, b, "_delta_log/x.parquet", size)
		if err != nil || n != int64(len(content)) {
			t.Fatalf("newReaderAt(size %d) = %d, %v", size, n, err)
		}
		tests := []struct {
			off     int64
			n       int
			want    string
			wantEOF bool
		}{
			{0, 4, "0123", false},
			{12, 4, "cdef", false},
			{14, 4, "ef", true},
			{16, 1, "", true},
		}
		for _, tc := range tests {
			p := make([]byte, tc.n)
			k, err := ra.ReadAt(p, tc.off)
			if string(p[:k]) != tc.want || (err == io.EOF) != tc.wantEOF || (err != nil && err != io.EOF) {
				t.Errorf("ReadAt(%d bytes at %d) = %q, %v; want %q, EOF=%v", tc.n, tc.off, p[:k], err, tc.want, tc.wantEOF)
			}
		}
	}
}

func TestOpenBucketErrors(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url, wantErr string
	}{
		{"ftp://x/y", "unsupported URL scheme"},
		{"s3:///path", "names no bucket"},
		{"file://host/x", "has a host"},
		{file, "not a directory"},
		{filepath.Join(t.TempDir(), "missing"), "does not exist"},
	}
	if azureEnabled {
		tests = append(tests, struct{ url, wantErr string }{"azblob://c/t?protocol=http", "storage_account"})
	} else {
		tests = append(tests, struct{ url, wantErr string }{"azblob://c/t?protocol=http", "tag noazure"})
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			creds := Credentials{}
			if strings.HasPrefix(tc.url, "azblob") {
				creds.AzureSASToken = "sv=x&sig=y"
			}
			b, _, err := openBucket(ctx, tc.url, creds)
			if err == nil {
				b.Close()
				t.Fatalf("openBucket(%q) succeeded, want error containing %q", tc.url, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("openBucket(%q) error %q, want it to contain %q", tc.url, err, tc.wantErr)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	corpus := corpusDir(t)
	var ops []string
	obs := WithObserver(func(op string, _ time.Duration, _ error) { ops = append(ops, op) })
	tbl, err := Open(ctx, filepath.Join(corpus, "checkpoint"), obs)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 14 {
		t.Errorf("Version = %d, want 14", snap.Version)
	}
	if err := tbl.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if len(ops) == 0 || ops[0] == "" {
		t.Errorf("observer saw no requests")
	}
	for _, op := range ops {
		if op != "list" && op != "get" {
			t.Errorf("observer op %q, want list or get", op)
		}
	}

	_, err = Open(ctx, filepath.Join(t.TempDir(), "nope"))
	var le *LogError
	if !errors.As(err, &le) || !errors.Is(err, ErrNotATable) || le.Op != "open" {
		t.Errorf("Open(missing dir) = %v, want *LogError{Op: open} wrapping ErrNotATable", err)
	}
	_, err = Open(ctx, "azblob://c/t?storage_account=a&sig=secret", WithCredentials(Credentials{AzureSASToken: "sv=1&sig=x"}))
	if azureEnabled && (err == nil || strings.Contains(err.Error(), "secret")) {
		t.Errorf("Open(azblob with unknown param) = %v, want an error without the query", err)
	}
}

// TestLocalTablesShareBucket: local tables opened with Open read through one
// bucket over the file system, each under its own directory: a table's
// listing holds only its own log (not a sibling's whose name it prefixes),
// closing one table leaves the others readable, and a path fileblob would
// escape gets a bucket of its own.
func TestLocalTablesShareBucket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	corpus := corpusDir(t)
	testcorpus.CopyTree(t, filepath.Join(corpus, "checkpoint"), filepath.Join(dir, "t"), nil)
	testcorpus.CopyTree(t, filepath.Join(corpus, "delta-0.8.0"), filepath.Join(dir, "t2"), nil)
	testcorpus.CopyTree(t, filepath.Join(corpus, "delta-0.8.0"), filepath.Join(dir, "odd__0x41__name"), nil)
	open := func(name string) *Table {
		t.Helper()
		tbl, err := Open(ctx, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	a, b, odd := open("t"), open("t2"), open("odd__0x41__name")
	if a.bucket != b.bucket || a.ownsBucket || b.ownsBucket {
		t.Fatalf("two local tables: buckets %p and %p (owned %v, %v), want one shared", a.bucket, b.bucket, a.ownsBucket, b.ownsBucket)
	}
	if odd.bucket == a.bucket || !odd.ownsBucket || odd.prefix != "" {
		t.Errorf("a path with %q shares the bucket; want its own, rooted at the table", "__0x")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for name, tbl := range map[string]*Table{"t": a, "odd": odd} {
		snap, err := tbl.Load(ctx, LoadOptions{})
		if err != nil {
			t.Fatalf("%s after another table closed: %v", name, err)
		}
		want := int64(14)
		if name == "odd" {
			want = 1
		}
		if snap.Version != want {
			t.Errorf("%s: version %d, want %d", name, snap.Version, want)
		}
	}
	objs, err := a.listObjects(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Key, logDir) {
			t.Errorf("listing of t returned %q, want keys under %s", o.Key, logDir)
		}
	}
	if n := len(objs); n == 0 {
		t.Error("listing of t is empty")
	}
}
