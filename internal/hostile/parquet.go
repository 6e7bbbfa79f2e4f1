package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Checkpoint row shapes, as Delta writers lay them out: one action per
// row, the others null. Tests that need a checkpoint of their own write
// these with WriteCheckpoint.
type (
	// CheckpointProtocol is a protocol action.
	CheckpointProtocol struct {
		MinReaderVersion int32    `parquet:"minReaderVersion"`
		MinWriterVersion int32    `parquet:"minWriterVersion"`
		ReaderFeatures   []string `parquet:"readerFeatures,list"`
		WriterFeatures   []string `parquet:"writerFeatures,list"`
	}
	// CheckpointFormat is metaData.format.
	CheckpointFormat struct {
		Provider string            `parquet:"provider"`
		Options  map[string]string `parquet:"options"`
	}
	// CheckpointMetadata is a metaData action.
	CheckpointMetadata struct {
		ID               string            `parquet:"id"`
		Description      *string           `parquet:"description,optional"`
		Format           CheckpointFormat  `parquet:"format"`
		SchemaString     string            `parquet:"schemaString"`
		PartitionColumns []string          `parquet:"partitionColumns,list"`
		Configuration    map[string]string `parquet:"configuration"`
		CreatedTime      *int64            `parquet:"createdTime,optional"`
	}
	// CheckpointDomain is a domainMetadata action.
	CheckpointDomain struct {
		Domain        string `parquet:"domain"`
		Configuration string `parquet:"configuration"`
		Removed       bool   `parquet:"removed"`
	}
	// CheckpointAdd is an add action (the columns a reader of P&M touches).
	CheckpointAdd struct {
		Path  string `parquet:"path"`
		Size  int64  `parquet:"size"`
		Stats string `parquet:"stats"`
	}
	// CheckpointRow is one checkpoint row.
	CheckpointRow struct {
		Add            *CheckpointAdd      `parquet:"add,optional"`
		Protocol       *CheckpointProtocol `parquet:"protocol,optional"`
		MetaData       *CheckpointMetadata `parquet:"metaData,optional"`
		DomainMetadata *CheckpointDomain   `parquet:"domainMetadata,optional"`
	}
)

// Schema is the table schema of the built tables: columns a (long) and s.b.
const Schema = `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"b","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`

// Clustering is the delta.clustering domain configuration of the built
// checkpoints.
const Clustering = `{"clusteringColumns":[["a"]]}`

// checkpointRows are the rows of a clustered table's checkpoint: adds,
// protocol, metaData and the delta.clustering domain.
func checkpointRows(schema string, conf map[string]string, adds int) []CheckpointRow {
	created := int64(1700000000000)
	var rows []CheckpointRow
	for i := range adds {
		rows = append(rows, CheckpointRow{Add: &CheckpointAdd{Path: fmt.Sprintf("part-%05d.parquet", i), Size: int64(1000 + i), Stats: `{"numRecords":1}`}})
	}
	if conf == nil {
		conf = map[string]string{"delta.enableDeletionVectors": "false"}
	}
	return append(rows,
		CheckpointRow{Protocol: &CheckpointProtocol{MinReaderVersion: 1, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{"domainMetadata", "clustering"}}},
		CheckpointRow{MetaData: &CheckpointMetadata{ID: "11111111-2222-3333-4444-555555555555", Format: CheckpointFormat{Provider: "parquet", Options: map[string]string{}},
			SchemaString: schema, PartitionColumns: []string{}, Configuration: conf, CreatedTime: &created}},
		CheckpointRow{DomainMetadata: &CheckpointDomain{Domain: "delta.clustering", Configuration: Clustering}},
	)
}

// WriteCheckpoint encodes rows as a Parquet checkpoint.
func WriteCheckpoint(rows []CheckpointRow, opts ...parquet.WriterOption) ([]byte, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[CheckpointRow](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// footer decodes the footer of a Parquet file and returns it with the
// offset where it starts.
func footer(data []byte) (*format.FileMetaData, int, error) {
	n := len(data)
	if n < 12 || string(data[n-4:]) != "PAR1" {
		return nil, 0, fmt.Errorf("not a parquet file")
	}
	flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	start := n - 8 - flen
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[start:n-8], &md); err != nil {
		return nil, 0, err
	}
	return &md, start, nil
}

// withFooter replaces the footer of data (starting at start) by md.
func withFooter(data []byte, start int, md *format.FileMetaData) ([]byte, error) {
	enc, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), data[:start]...)
	out = append(out, enc...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(enc)))
	return append(out, "PAR1"...), nil
}

// RewriteFooter decodes the footer of a Parquet file, lets edit change it
// and re-encodes it in place; column chunks and indexes stay where they
// are.
func RewriteFooter(data []byte, edit func(*format.FileMetaData)) ([]byte, error) {
	md, start, err := footer(data)
	if err != nil {
		return nil, err
	}
	edit(md)
	return withFooter(data, start, md)
}

// EditChunks applies edit to the metadata of every column chunk whose
// path is path (every chunk when path is nil).
func EditChunks(data []byte, path []string, edit func(*format.ColumnChunk, int64)) ([]byte, error) {
	size := int64(len(data))
	found := false
	out, err := RewriteFooter(data, func(md *format.FileMetaData) {
		for g := range md.RowGroups {
			for c := range md.RowGroups[g].Columns {
				cc := &md.RowGroups[g].Columns[c]
				if path == nil || slices.Equal(cc.MetaData.PathInSchema, path) {
					edit(cc, size)
					found = true
				}
			}
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("no column chunk %v", path)
	}
	return out, err
}

// PatchFirstPage rewrites the first page of the column chunk at path in
// row group 0: edit may change its header and returns its new body. Every
// offset after the page moves by the change in size; page indexes are
// dropped (their page offsets would be stale).
func PatchFirstPage(data []byte, path []string, edit func(h *format.PageHeader, body []byte) []byte) ([]byte, error) {
	md, fstart, err := footer(data)
	if err != nil {
		return nil, err
	}
	var cc *format.ColumnChunk
	for c := range md.RowGroups[0].Columns {
		if slices.Equal(md.RowGroups[0].Columns[c].MetaData.PathInSchema, path) {
			cc = &md.RowGroups[0].Columns[c]
		}
	}
	if cc == nil {
		return nil, fmt.Errorf("no column chunk %v", path)
	}
	off := cc.MetaData.DataPageOffset
	if d := cc.MetaData.DictionaryPageOffset; d > 0 && d < off {
		off = d
	}
	pr := new(thrift.CompactProtocol).NewReaderFromBytes(data[off:fstart])
	var h format.PageHeader
	if err := thrift.NewDecoder(pr).Decode(&h); err != nil {
		return nil, err
	}
	hl := int64(pr.BytesRead())
	body := data[off+hl : off+hl+int64(h.CompressedPageSize)]
	oldLen := hl + int64(h.CompressedPageSize)
	newBody := edit(&h, slices.Clone(body))
	h.CompressedPageSize = int32(len(newBody))
	h.CRC = 0
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		return nil, err
	}
	delta := int64(len(hdr)+len(newBody)) - oldLen
	shift := func(p *int64) {
		if *p > off {
			*p += delta
		}
	}
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		shift(&rg.FileOffset)
		for c := range rg.Columns {
			x := &rg.Columns[c]
			if x == cc {
				x.MetaData.TotalCompressedSize += delta
			}
			shift(&x.FileOffset)
			shift(&x.MetaData.DataPageOffset)
			shift(&x.MetaData.DictionaryPageOffset)
			x.ColumnIndexOffset, x.ColumnIndexLength = 0, 0
			x.OffsetIndexOffset, x.OffsetIndexLength = 0, 0
		}
	}
	out := append([]byte(nil), data[:off]...)
	out = append(out, hdr...)
	out = append(out, newBody...)
	out = append(out, data[off+oldLen:fstart]...)
	return withFooter(out, int(int64(fstart)+delta), md)
}

// Checkpoint returns a small clustered checkpoint (20 adds, protocol,
// metaData, the delta.clustering domain) written by parquet-go with its
// default options and codec (gzip when gz), page index included: the base
// the hostile checkpoints and the fuzz targets patch.
func Checkpoint(gz bool) ([]byte, error) {
	if gz {
		return baseCheckpoint(parquet.Compression(&parquet.Gzip))
	}
	return baseCheckpoint()
}
