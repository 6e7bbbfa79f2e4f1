package deltalog

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBenchFixture checks that the benchmark fixture is a table Load reads
// as intended (latest version, the changed metaData, the checkpoint's
// protocol), on a small instance of the same shape.
func TestBenchFixture(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DELTASYNC_CACHE", dir)
	root := fixtureDir(t, 2000)
	if filepath.Dir(filepath.Dir(root)) != dir {
		t.Fatalf("fixture at %s, want under %s", root, dir)
	}
	tbl, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	snap, err := tbl.Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sorted := func(s []string) []string { s = append([]string(nil), s...); sort.Strings(s); return s }
	got := struct {
		Version                        int64
		MinReader, MinWriter           int
		ReaderFeatures, WriterFeatures []string
		ID                             string
		Config                         map[string]string
		Partition                      []string
		SchemaFields                   int
	}{snap.Version, snap.Protocol.MinReaderVersion, snap.Protocol.MinWriterVersion,
		sorted(snap.Protocol.ReaderFeatures), sorted(snap.Protocol.WriterFeatures),
		snap.Metadata.ID, snap.Metadata.Configuration, snap.Metadata.PartitionColumns, len(snap.Schema.Fields)}
	want := got
	want.Version, want.MinReader, want.MinWriter = fixtureLatest, 3, 7
	want.ReaderFeatures, want.WriterFeatures = sorted(fixtureReaderFeatures), sorted(fixtureWriterFeatures)
	want.ID, want.Config, want.Partition, want.SchemaFields = fixtureTableID, fixtureConfig(true), []string{"day"}, 6
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fixture snapshot (-want +got):\n%s", diff)
	}
}
