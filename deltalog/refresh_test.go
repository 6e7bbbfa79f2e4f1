package deltalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"github.com/google/go-cmp/cmp"
)

const (
	commitInfoLine = `{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}` + "\n"
	addLine        = `{"add":{"path":"x.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}` + "\n"
	metadataLine   = `{"metaData":{"id":"testId","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"intCol\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{"k":"v"}}}` + "\n"
)

func commitText(ts int64, lines ...string) string {
	s := fmt.Sprintf(commitInfoLine, ts)
	for _, l := range lines {
		s += l
	}
	return s
}

// TestRefresh walks a table through each kind of change and checks the
// result, the snapshot and the requests made.
func TestRefresh(t *testing.T) {
	ctx := context.Background()
	tbl, b, c := memTable(t, "checkpoint")
	prev, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		change   func()
		want     RefreshResult
		version  int64
		gets     []string
		config   map[string]string
		errIs    error
		tsWanted int64
	}{
		{name: "nothing new", change: func() {}, want: Unchanged, version: 14, config: map[string]string{}},
		{name: "one commit without metadata", change: func() {
			put(t, b, commitKey(15), commitText(1500, addLine))
		}, want: Advanced, version: 15, gets: []string{commitKey(15)}, config: map[string]string{}, tsWanted: 1500},
		{name: "metadata change", change: func() {
			put(t, b, commitKey(16), commitText(1600, metadataLine))
		}, want: Advanced, version: 16, gets: []string{commitKey(16)}, config: map[string]string{"k": "v"}, tsWanted: 1600},
		{name: "new checkpoint is not read", change: func() {
			data, _ := os.ReadFile(filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log", "00000000000000000010.checkpoint.parquet"))
			put(t, b, "_delta_log/00000000000000000017.checkpoint.parquet", string(data))
			put(t, b, commitKey(17), commitText(1700, addLine))
			put(t, b, commitKey(18), commitText(1800, addLine))
		}, want: Advanced, version: 18, gets: []string{commitKey(18), commitKey(17)}, config: map[string]string{"k": "v"}, tsWanted: 1800},
		{name: "gap after the new checkpoint", change: func() {
			put(t, b, commitKey(20), commitText(2000, addLine))
		}, want: Rebuilt, errIs: ErrVersionGap},
		{name: "log rewritten", change: func() {
			it := b.List(nil)
			for {
				o, err := it.Next(ctx)
				if err != nil {
					break
				}
				_ = b.Delete(ctx, o.Key)
			}
			put(t, b, commitKey(0), commitText(100, `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n", metadataLine))
		}, want: Rebuilt, version: 0, config: map[string]string{"k": "v"}, tsWanted: 100},
	}
	for _, st := range steps {
		st.change()
		c.reset()
		snap, res, err := tbl.Refresh(ctx, prev, LoadOptions{})
		if res != st.want {
			t.Errorf("%s: result %v, want %v", st.name, res, st.want)
		}
		if st.errIs != nil {
			if !errors.Is(err, st.errIs) {
				t.Errorf("%s: error %v, want %v", st.name, err, st.errIs)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		lists, gets := c.counts()
		if st.want != Rebuilt {
			if lists != 1 {
				t.Errorf("%s: %d LISTs, want 1", st.name, lists)
			}
			if diff := cmp.Diff(st.gets, gets); diff != "" {
				t.Errorf("%s: GETs (-want +got):\n%s", st.name, diff)
			}
		}
		if st.want == Unchanged && snap != prev {
			t.Errorf("%s: got a new snapshot, want prev", st.name)
		}
		if snap.Version != st.version {
			t.Errorf("%s: version %d, want %d", st.name, snap.Version, st.version)
		}
		if diff := cmp.Diff(st.config, snap.Metadata.Configuration); diff != "" {
			t.Errorf("%s: configuration (-want +got):\n%s", st.name, diff)
		}
		if st.tsWanted != 0 && snap.CommitTimestamp != st.tsWanted {
			t.Errorf("%s: commitTimestamp %d, want %d", st.name, snap.CommitTimestamp, st.tsWanted)
		}
		if snap.Protocol.MinReaderVersion != 1 || snap.Schema == nil {
			t.Errorf("%s: protocol/schema not carried over: %+v", st.name, snap.Protocol)
		}
		prev = snap
	}
}

// TestRefreshCatalogManaged: ratified staged commits advance a snapshot
// loaded from the published log, reading only the staged files.
func TestRefreshCatalogManaged(t *testing.T) {
	ctx := context.Background()
	tbl, c := countedCorpusTable(t, "basic_catalog_managed")
	prev, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if prev.Version != 1 || !prev.CatalogManaged {
		t.Fatalf("published log: version %d catalogManaged %v", prev.Version, prev.CatalogManaged)
	}
	c.reset()
	maxVersion := int64(3)
	opts := LoadOptions{RatifiedCommits: ratifiedFromDir(t, "basic_catalog_managed"), MaxRatifiedVersion: &maxVersion}
	snap, res, err := tbl.Refresh(ctx, prev, opts)
	if err != nil || res != Advanced || snap.Version != 3 {
		t.Fatalf("Refresh = v%v %v %v, want v3 advanced", snap, res, err)
	}
	_, gets := c.counts()
	want := []string{
		"_delta_log/_staged_commits/00000000000000000003.f7e8d9c0-b1a2-4536-9748-5a6b7c8d9e0f.json",
		"_delta_log/_staged_commits/00000000000000000002.a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d.json",
	}
	if diff := cmp.Diff(want, gets); diff != "" {
		t.Errorf("GETs (-want +got):\n%s", diff)
	}
	if snap.CommitTimestamp != 1712091415000 {
		t.Errorf("commitTimestamp = %d, want the in-commit timestamp 1712091415000", snap.CommitTimestamp)
	}
	// The same call again changes nothing and reads nothing.
	c.reset()
	again, res, err := tbl.Refresh(ctx, snap, opts)
	if _, gets := c.counts(); err != nil || res != Unchanged || again != snap || len(gets) != 0 {
		t.Errorf("second Refresh = %v %v, %d GETs; want unchanged, 0 GETs", res, err, len(gets))
	}
	// Capping below the snapshot's version means the catalog went back.
	low := int64(1)
	if _, res, _ := tbl.Refresh(ctx, snap, LoadOptions{MaxRatifiedVersion: &low}); res != Rebuilt {
		t.Errorf("Refresh with max 1 = %v, want rebuilt", res)
	}
}
