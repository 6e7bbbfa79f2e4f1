package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob/memblob"
)

// Checkpoint row shapes for writing test checkpoints with parquet-go.
type (
	dmProtocol struct {
		MinReaderVersion int32    `parquet:"minReaderVersion"`
		MinWriterVersion int32    `parquet:"minWriterVersion"`
		ReaderFeatures   []string `parquet:"readerFeatures,list"`
		WriterFeatures   []string `parquet:"writerFeatures,list"`
	}
	dmFormat struct {
		Provider string            `parquet:"provider"`
		Options  map[string]string `parquet:"options"`
	}
	dmMetadata struct {
		ID               string            `parquet:"id"`
		Format           dmFormat          `parquet:"format"`
		SchemaString     string            `parquet:"schemaString"`
		PartitionColumns []string          `parquet:"partitionColumns,list"`
		Configuration    map[string]string `parquet:"configuration"`
		CreatedTime      *int64            `parquet:"createdTime,optional"`
	}
	dmDomain struct {
		Domain        string `parquet:"domain"`
		Configuration string `parquet:"configuration"`
		Removed       bool   `parquet:"removed"`
	}
	dmAdd struct {
		Path string `parquet:"path"`
		Size int64  `parquet:"size"`
	}
	dmRow struct {
		Add            *dmAdd      `parquet:"add,optional"`
		Protocol       *dmProtocol `parquet:"protocol,optional"`
		MetaData       *dmMetadata `parquet:"metaData,optional"`
		DomainMetadata *dmDomain   `parquet:"domainMetadata,optional"`
	}
)

// writeDomainCheckpoint encodes rows as a Parquet checkpoint.
func writeDomainCheckpoint(t *testing.T, rows []dmRow) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

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
