package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"

	"github.com/deltasync/deltasync/internal/hostile"
)

// writeDomainCheckpoint encodes rows as a Parquet checkpoint.
func writeDomainCheckpoint(t *testing.T, rows []dmRow) []byte {
	t.Helper()
	data, err := hostile.WriteCheckpoint(rows)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The checkpoint row shapes of internal/hostile, by shorter names.
type (
	dmRow      = hostile.CheckpointRow
	dmAdd      = hostile.CheckpointAdd
	dmProtocol = hostile.CheckpointProtocol
	dmMetadata = hostile.CheckpointMetadata
	dmFormat   = hostile.CheckpointFormat
	dmDomain   = hostile.CheckpointDomain
)

const clusteredSchema = `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"b","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`

func domainLine(domain, conf string, removed bool) string {
	return fmt.Sprintf(`{"domainMetadata":{"domain":%q,"configuration":%q,"removed":%v}}`+"\n", domain, conf, removed)
}

// TestDomains: domainMetadata from a Go-written checkpoint and later
// commits, newest wins, removed deletes; clustering columns come from
// delta.clustering; Refresh carries untouched domains over.
func TestDomains(t *testing.T) {
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	created := int64(1700000000000)
	cp := writeDomainCheckpoint(t, []dmRow{
		{Add: &dmAdd{Path: "a.parquet", Size: 1}},
		{Protocol: &dmProtocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"domainMetadata", "clustering"}}},
		{MetaData: &dmMetadata{ID: "t1", Format: dmFormat{Provider: "parquet", Options: map[string]string{}},
			SchemaString: clusteredSchema, PartitionColumns: []string{}, Configuration: map[string]string{"x": "1"}, CreatedTime: &created}},
		{DomainMetadata: &dmDomain{Domain: "delta.clustering", Configuration: `{"clusteringColumns":[["a"]]}`}},
		{DomainMetadata: &dmDomain{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":7}`}},
		{DomainMetadata: &dmDomain{Domain: "app.old", Configuration: `{}`}},
	})
	put(t, mb, "_delta_log/00000000000000000003.checkpoint.parquet", string(cp))
	put(t, mb, commitKey(4), fmt.Sprintf(commitInfoLine, 4000)+domainLine("app.old", "", true))
	put(t, mb, commitKey(5), fmt.Sprintf(commitInfoLine, 5000)+domainLine("delta.clustering", `{"clusteringColumns":[["a"],["s","b"]]}`, false))
	b, c := newCountingBucket(mb)
	tbl := NewTable(b, "clustered")
	snap, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"delta.clustering":  `{"clusteringColumns":[["a"],["s","b"]]}`,
		"delta.rowTracking": `{"rowIdHighWaterMark":7}`,
	}
	if diff := cmp.Diff(want, snap.Domains); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"s", "b"}}, snap.ClusteringColumns()); diff != "" {
		t.Errorf("clustering (-want +got):\n%s", diff)
	}
	if snap.Metadata.ID != "t1" || snap.Metadata.Configuration["x"] != "1" || *snap.Metadata.CreatedTime != created {
		t.Errorf("metadata from Go-written checkpoint: %+v", snap.Metadata)
	}
	raw, _ := snap.MarshalJSON()
	wantRaw := `{"version":5,"protocol":{"minReaderVersion":1,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":["domainMetadata","clustering"]},` +
		`"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":` + fmt.Sprintf("%q", clusteredSchema) +
		`,"partitionColumns":[],"configuration":{"x":"1"},"createdTime":1700000000000},"commitTimestamp":5000,"catalogManaged":false,` +
		`"domains":{"delta.clustering":"{\"clusteringColumns\":[[\"a\"],[\"s\",\"b\"]]}","delta.rowTracking":"{\"rowIdHighWaterMark\":7}"}}`
	if diff := cmp.Diff(wantRaw, string(raw)); diff != "" {
		t.Errorf("snapshot JSON (-want +got):\n%s", diff)
	}

	put(t, mb, commitKey(6), fmt.Sprintf(commitInfoLine, 6000)+domainLine("delta.clustering", "", true))
	c.reset()
	next, res, err := tbl.Refresh(ctx, snap, LoadOptions{})
	if err != nil || res != Advanced {
		t.Fatalf("Refresh = %v, %v", res, err)
	}
	if next.ClusteringColumns() != nil || next.Domains["delta.rowTracking"] == "" {
		t.Errorf("after removing clustering: domains %v", next.Domains)
	}
	if _, gets := c.counts(); len(gets) != 1 {
		t.Errorf("Refresh read %v, want only the new commit", gets)
	}
}

// TestCheckpointReadAlongsideCommits: the checkpoint below a run of
// commits is read while the commits are fetched, yet the snapshot is the
// one of a replay that reads it only when needed: with protocol and
// metaData in a newer commit, a checkpoint that cannot be read does not
// fail the Load; with a newer protocol without domainMetadata, the
// checkpoint's domains are not taken; otherwise its error names it.
func TestCheckpointReadAlongsideCommits(t *testing.T) {
	ctx := context.Background()
	cpKey := "_delta_log/00000000000000000003.checkpoint.parquet"
	goodCP := writeDomainCheckpoint(t, []dmRow{
		{Add: &dmAdd{Path: "a.parquet", Size: 1}},
		{Protocol: &dmProtocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"domainMetadata"}}},
		{MetaData: &dmMetadata{ID: "from-checkpoint", Format: dmFormat{Provider: "parquet", Options: map[string]string{}},
			SchemaString: clusteredSchema, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{DomainMetadata: &dmDomain{Domain: "app.cp", Configuration: `{}`}},
	})
	oldProto := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n"
	table := func(cp string, commits ...string) *Table {
		mb := memblob.OpenBucket(nil)
		t.Cleanup(func() { mb.Close() })
		put(t, mb, cpKey, cp)
		for i, text := range commits {
			v := int64(4 + i)
			put(t, mb, commitKey(v), fmt.Sprintf(commitInfoLine, v)+text)
		}
		return NewTable(mb, "t")
	}

	// Protocol and metaData in the newest commit, checkpoint corrupt.
	commits := []string{addLine, addLine, addLine, oldProto + metadataLine}
	snap, err := table("not parquet", commits...).Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatalf("Load with P&M after an unreadable checkpoint: %v", err)
	}
	if snap.Metadata.ID != "testId" || snap.Protocol.MinWriterVersion != 2 || snap.Version != 7 {
		t.Errorf("snapshot %+v, want protocol and metaData of commit 7", snap)
	}

	// A newer protocol without domainMetadata; metaData and domains only
	// in the checkpoint.
	snap, err = table(string(goodCP), addLine, oldProto, addLine).Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Metadata.ID != "from-checkpoint" || snap.Protocol.MinWriterVersion != 2 || len(snap.Domains) != 0 {
		t.Errorf("snapshot metadata %q, protocol %+v, domains %v; want checkpoint metaData, commit 5's protocol, no domains",
			snap.Metadata.ID, snap.Protocol, snap.Domains)
	}

	// The checkpoint is needed: its domains count, and its error names it.
	snap, err = table(string(goodCP), addLine, addLine).Load(ctx, LoadOptions{})
	if err != nil || snap.Domains["app.cp"] != "{}" || snap.Metadata.ID != "from-checkpoint" {
		t.Errorf("Load = %+v, %v; want the checkpoint's metaData and domain app.cp", snap, err)
	}
	_, err = table("not parquet", addLine, addLine).Load(ctx, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), cpKey) {
		t.Errorf("Load with an unreadable checkpoint = %v, want an error naming %s", err, cpKey)
	}
}

// TestCheckpointReadAlongsideCommitsDomainsNotWanted: the checkpoint read
// alongside the commits asks for domains (no protocol known yet), so it
// reads every row group; when a commit then brings a protocol without
// domainMetadata, an error that only reading domains hits (here a corrupt
// later row group) does not fail the Load, as the checkpoint is read again
// without them, as a replay that reads it only when needed would have.
func TestCheckpointReadAlongsideCommitsDomainsNotWanted(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[dmRow](&buf, parquet.MaxRowsPerRowGroup(2))
	if _, err := w.Write([]dmRow{
		{Protocol: &dmProtocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"domainMetadata"}}},
		{MetaData: &dmMetadata{ID: "from-checkpoint", Format: dmFormat{Provider: "parquet", Options: map[string]string{}},
			SchemaString: clusteredSchema, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{DomainMetadata: &dmDomain{Domain: "app.cp", Configuration: `{}`}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rgs := f.Metadata().RowGroups
	if len(rgs) != 2 {
		t.Fatalf("%d row groups, want 2", len(rgs))
	}
	// Overwrite the second row group's column chunks (pages) with garbage.
	for _, cc := range rgs[1].Columns {
		off := cc.MetaData.DataPageOffset
		if cc.MetaData.DictionaryPageOffset > 0 {
			off = cc.MetaData.DictionaryPageOffset
		}
		for k := off; k < off+cc.MetaData.TotalCompressedSize; k++ {
			data[k] = 0xff
		}
	}
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	put(t, mb, "_delta_log/00000000000000000003.checkpoint.parquet", string(data))
	put(t, mb, commitKey(4), fmt.Sprintf(commitInfoLine, 4)+addLine)
	if _, err := NewTable(mb, "t").Load(ctx, LoadOptions{}); err == nil {
		t.Fatal("Load of a checkpoint with a corrupt domain row group succeeded; the test needs one that fails when domains are read")
	}
	put(t, mb, commitKey(5), fmt.Sprintf(commitInfoLine, 5)+`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`+"\n")
	snap, err := NewTable(mb, "t").Load(ctx, LoadOptions{})
	if err != nil || snap.Metadata.ID != "from-checkpoint" || snap.Protocol.MinWriterVersion != 2 {
		t.Errorf("Load = %+v, %v; want the checkpoint's metaData and commit 5's protocol", snap, err)
	}
}
