package deltalog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// This file checks the structure of a Parquet checkpoint before parquet-go
// is let near it (issue 21, items 3 and 5). parquet-go reads what a file
// says: a column chunk whose offset is past the end of the file reads as a
// chunk with no pages (so the action in it looked absent), and it
// allocates buffers from the sizes that footers and page headers claim and
// inflates pages without bound. So, before it reads anything:
//
//   - checkFooter: the footer length fits in the file, and no list or
//     string in the footer claims more than the footer holds (checkThrift);
//   - checkLayout: every column chunk, dictionary page, column index and
//     offset index in the footer lies inside the file, before the footer,
//     and the row counts of the row groups add up to the file's;
//   - checkChunk, for each column chunk deltalog is about to read: its
//     pages, walked header by header, fill the chunk exactly; each page's
//     sizes fit in the chunk and under maxPageBytes, and its compressed
//     bytes inflate to at most the size its header claims (checked with a
//     bounded reader, never allocating from the claim); the values of the
//     pages add up to the chunk's, and a non-repeated column's to the row
//     group's rows; its offset index lists exactly those pages.
//
// Any failure is ErrCorrupt; what could not fit in the Load's budget is
// ErrBudgetExceeded.

// maxPageBytes bounds the uncompressed size of one checkpoint page. Writers
// cut pages at about 1 MiB (parquet-mr, arrow-rs, parquet-go); a page
// holding one huge schemaString is the largest legitimate one.
const maxPageBytes = 64 << 20

// maxPageValues bounds the values one page may claim. Run-length encoding
// lets a few bytes claim millions of null values, and levels are decoded
// one byte per value.
const maxPageValues = 64 << 20

// maxIndexBytes bounds one column or offset index.
const maxIndexBytes = 16 << 20

// corruptf is an ErrCorrupt reason.
func corruptf(format string, args ...any) error { return reason(ErrCorrupt, format, args...) }

// checkFooter validates the tail of a Parquet file of size bytes: magic,
// footer length, and the claims of the footer's Thrift encoding.
func checkFooter(r io.ReaderAt, size int64, b *budget) error {
	if size < 12 {
		return corruptf("%d bytes is too short for a Parquet file", size)
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return corruptf("reading the Parquet footer: %v", err)
	}
	if string(tail[4:]) != "PAR1" {
		return corruptf("not a Parquet file (trailing magic %q)", tail[4:])
	}
	flen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if flen == 0 || flen > size-12 {
		return corruptf("Parquet footer length %d does not fit in a file of %d bytes", flen, size)
	}
	if err := b.take(flen, "the Parquet footer"); err != nil {
		return err
	}
	defer b.give(flen)
	footer := getBuf(int(flen))[:flen]
	defer putBuf(footer)
	if _, err := r.ReadAt(footer, size-8-flen); err != nil {
		return corruptf("reading the Parquet footer: %v", err)
	}
	_, alloc, err := checkThrift(footer)
	if err != nil {
		return corruptf("Parquet footer: %v", err)
	}
	// What parquet-go will allocate decoding it, checked against the
	// budget: a few MiB of empty structs can decode to gigabytes.
	if err := b.take(alloc, "decoding the Parquet footer"); err != nil {
		return err
	}
	b.give(alloc)
	return nil
}

// chunkSpan returns the byte range [start, end) of a column chunk.
func chunkSpan(m *format.ColumnMetaData) (start, end int64) {
	start = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	return start, start + m.TotalCompressedSize
}

// checkLayout validates the footer's byte ranges and counts against the
// file: size bytes, the footer taking the last footerLen+8.
func checkLayout(f *parquet.File, size int64) error {
	md := f.Metadata()
	dataEnd := size - 8 - footerLength(f, size)
	leaves := len(f.Schema().Columns())
	var rows int64
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows < 0 {
			return corruptf("row group %d claims %d rows", g, rg.NumRows)
		}
		rows += rg.NumRows
		if len(rg.Columns) != leaves {
			return corruptf("row group %d has %d column chunks for %d columns", g, len(rg.Columns), leaves)
		}
		for c := range rg.Columns {
			if err := checkChunkRange(&rg.Columns[c], dataEnd); err != nil {
				return corruptf("row group %d column %s: %v", g, columnName(f, c), err)
			}
		}
	}
	if rows != md.NumRows {
		return corruptf("row groups hold %d rows, the footer claims %d", rows, md.NumRows)
	}
	return nil
}

// footerLength is the footer length recorded in the file's tail (already
// validated by checkFooter).
func footerLength(f *parquet.File, size int64) int64 {
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(tail[:4]))
}

// columnName names leaf column c for errors, as a dotted path.
func columnName(f *parquet.File, c int) string {
	cols := f.Schema().Columns()
	if c < 0 || c >= len(cols) {
		return fmt.Sprintf("#%d", c)
	}
	name := ""
	for i, p := range cols[c] {
		if i > 0 {
			name += "."
		}
		name += p
	}
	return name
}

// checkChunkRange checks that a column chunk and its indexes lie in
// [4, dataEnd).
func checkChunkRange(cc *format.ColumnChunk, dataEnd int64) error {
	if cc.FilePath != "" {
		return fmt.Errorf("column chunk in another file (%q)", cc.FilePath)
	}
	m := &cc.MetaData
	if m.NumValues < 0 || m.TotalCompressedSize < 0 {
		return fmt.Errorf("chunk claims %d values in %d bytes", m.NumValues, m.TotalCompressedSize)
	}
	start, end := chunkSpan(m)
	if start < 4 || end > dataEnd || end < start {
		return fmt.Errorf("chunk at offset %d of %d bytes lies outside the file's %d data bytes", start, m.TotalCompressedSize, dataEnd)
	}
	if m.NumValues > 0 && m.TotalCompressedSize == 0 {
		return fmt.Errorf("chunk claims %d values in 0 bytes", m.NumValues)
	}
	if m.TotalCompressedSize > 0 && (m.DataPageOffset < start || m.DataPageOffset >= end) {
		return fmt.Errorf("data page offset %d outside the chunk [%d, %d)", m.DataPageOffset, start, end)
	}
	if m.DictionaryPageOffset < 0 {
		return fmt.Errorf("dictionary page offset %d", m.DictionaryPageOffset)
	}
	if err := checkIndexRange("column index", cc.ColumnIndexOffset, cc.ColumnIndexLength, dataEnd); err != nil {
		return err
	}
	return checkIndexRange("offset index", cc.OffsetIndexOffset, cc.OffsetIndexLength, dataEnd)
}

func checkIndexRange(what string, off int64, length int32, dataEnd int64) error {
	if off == 0 && length == 0 {
		return nil
	}
	if off < 4 || length <= 0 || length > maxIndexBytes || off > dataEnd-int64(length) { // no overflow near MaxInt64
		return fmt.Errorf("%s at offset %d of %d bytes lies outside the file's %d data bytes (or is empty or over %d bytes)",
			what, off, length, dataEnd, maxIndexBytes)
	}
	return nil
}

// checkIndexes checks the Thrift claims of leaf's offset index in row
// group g and, when withColumnIndex (a key leaf, whose column index is
// read), of its column index, so parquet-go can decode them.
func checkIndexes(f *parquet.File, g int, leaf *parquet.Column, withColumnIndex bool, b *budget) error {
	cc := &f.Metadata().RowGroups[g].Columns[leaf.Index()]
	for _, ix := range []struct {
		what   string
		off    int64
		length int32
	}{{"column index", cc.ColumnIndexOffset, cc.ColumnIndexLength}, {"offset index", cc.OffsetIndexOffset, cc.OffsetIndexLength}} {
		if ix.off == 0 || (ix.what == "column index" && !withColumnIndex) {
			continue
		}
		if err := b.take(int64(ix.length), "a "+ix.what); err != nil {
			return err
		}
		data := getBuf(int(ix.length))[:ix.length]
		_, err := f.ReadAt(data, ix.off)
		var alloc int64
		if err == nil {
			_, alloc, err = checkThrift(data)
		}
		putBuf(data)
		b.give(int64(ix.length))
		if err == nil {
			// parquet-go decodes the index whole, as the footer.
			if err = b.take(alloc, "decoding a "+ix.what); err != nil {
				return err
			}
			b.give(alloc)
		}
		if err != nil {
			return corruptf("row group %d column %s: %s: %v", g, columnName(f, leaf.Index()), ix.what, err)
		}
	}
	return nil
}

// walkChunk walks every page of leaf's column chunk in row group g: the
// check of a chunk without an offset index, which parquet-go reads page
// after page.
func walkChunk(f *parquet.File, g int, leaf *parquet.Column, b *budget) error {
	rg := &f.Metadata().RowGroups[g]
	cc := &rg.Columns[leaf.Index()]
	m := &cc.MetaData
	start, end := chunkSpan(m)
	n := end - start
	fail := func(format string, args ...any) error {
		return corruptf("row group %d column %s: %s", g, columnName(f, leaf.Index()), fmt.Sprintf(format, args...))
	}
	if err := b.take(n, "a column chunk"); err != nil {
		return err
	}
	defer b.give(n)
	data := getBuf(int(n))[:n]
	defer putBuf(data)
	if got, err := f.ReadAt(data, start); int64(got) < n {
		return fail("reading %d bytes of column chunk at offset %d: %v", n, start, err)
	}
	codec := format.Uncompressed
	if c := leaf.Compression(); c != nil {
		codec = c.CompressionCodec()
	}
	var values int64
	afterData := false
	for pos := int64(0); pos < n; {
		h, hl, err := parsePageHeader(data[pos:])
		if err != nil {
			return fail("page header at offset %d: %v", start+pos, err)
		}
		body := data[pos+int64(hl):]
		if h.compressed < 0 || int64(h.compressed) > int64(len(body)) {
			return fail("page at offset %d claims %d bytes, the chunk has %d left", start+pos, h.compressed, len(body))
		}
		if h.uncompressed < 0 || h.uncompressed > maxPageBytes {
			return fail("page at offset %d claims to inflate to %d bytes (at most %d allowed)", start+pos, h.uncompressed, maxPageBytes)
		}
		body = body[:h.compressed]
		pv, err := checkPage(&h, body, codec, afterData, b)
		if err != nil {
			return fail("page at offset %d: %v", start+pos, err)
		}
		afterData = afterData || h.typ == int32(format.DataPage) || h.typ == int32(format.DataPageV2)
		values += pv
		pos += int64(hl) + int64(h.compressed)
	}
	if values != m.NumValues {
		return fail("pages hold %d values, the chunk metadata claims %d", values, m.NumValues)
	}
	if leaf.MaxRepetitionLevel() == 0 && values != rg.NumRows {
		return fail("%d values for %d rows in a non-repeated column", values, rg.NumRows)
	}
	return nil
}

// checkPage checks one page's sizes and inflation and returns how many
// values it holds (0 for a dictionary page). afterData: a data page was
// seen before it in the chunk.
func checkPage(h *pageHeader, body []byte, codec format.CompressionCodec, afterData bool, b *budget) (int64, error) {
	var values int64
	compressed := body
	want := int64(h.uncompressed)
	switch format.PageType(h.typ) {
	case format.DictionaryPage:
		if !h.dict {
			return 0, fmt.Errorf("dictionary page without its header")
		}
		if afterData {
			return 0, fmt.Errorf("dictionary page after data pages")
		}
		if nv := int64(h.numValues); nv < 0 || nv > maxPageValues || nv > 8*want+8 {
			return 0, fmt.Errorf("dictionary page claims %d values in %d bytes", nv, want)
		}
	case format.DataPage:
		if !h.dataV1 {
			return 0, fmt.Errorf("data page without its header")
		}
		values = int64(h.numValues)
	case format.DataPageV2:
		if !h.dataV2 {
			return 0, fmt.Errorf("data page v2 without its header")
		}
		values = int64(h.numValues)
		levels := int64(h.repLen) + int64(h.defLen)
		if h.repLen < 0 || h.defLen < 0 || levels > int64(len(body)) || levels > want {
			return 0, fmt.Errorf("levels of %d bytes do not fit in the page", levels)
		}
		if h.numNulls < 0 || h.numRows < 0 || int64(h.numNulls) > values || int64(h.numRows) > values {
			return 0, fmt.Errorf("page claims %d nulls and %d rows for %d values", h.numNulls, h.numRows, values)
		}
		compressed, want = body[levels:], want-levels
		if h.uncompressedV2 {
			codec = format.Uncompressed
		}
	case format.IndexPage:
		return 0, nil
	default:
		return 0, fmt.Errorf("unknown page type %d", h.typ)
	}
	if values < 0 || values > maxPageValues {
		return 0, fmt.Errorf("page claims %d values (at most %d allowed)", values, maxPageValues)
	}
	// What decoding the page holds: its inflated bytes and a level byte or
	// two per value.
	cost := int64(h.uncompressed) + 2*values
	if err := b.take(cost, "a checkpoint page"); err != nil {
		return 0, err
	}
	defer b.give(cost)
	return values, checkInflate(codec, compressed, want)
}

// checkInflate checks that src inflates (with codec) to at most want
// bytes, reading at most want+1 of them and allocating nothing in
// proportion to what src claims.
func checkInflate(codec format.CompressionCodec, src []byte, want int64) error {
	var r io.Reader
	switch codec {
	case format.Uncompressed:
		if int64(len(src)) != want {
			return fmt.Errorf("uncompressed page of %d bytes claims %d", len(src), want)
		}
		return nil
	case format.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return fmt.Errorf("snappy: %v", err)
		}
		if int64(n) > want {
			return fmt.Errorf("snappy page inflates to %d bytes, its header claims %d", n, want)
		}
		return nil
	case format.Lz4Raw:
		dst := make([]byte, want)
		if _, err := lz4.UncompressBlock(src, dst); err != nil {
			return fmt.Errorf("lz4 page does not inflate into the %d bytes its header claims: %v", want, err)
		}
		return nil
	case format.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return fmt.Errorf("gzip: %v", err)
		}
		defer zr.Close()
		r = zr
	case format.Zstd:
		var zh zstd.Header
		if err := zh.Decode(src); err == nil && zh.HasFCS && zh.FrameContentSize > uint64(want) {
			return fmt.Errorf("zstd frame claims %d bytes, the page header %d", zh.FrameContentSize, want)
		}
		zr, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(uint64(want)+1), zstd.WithDecoderMaxWindow(max(uint64(want), zstd.MinWindowSize)))
		if err != nil {
			return fmt.Errorf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	case format.Brotli:
		r = brotli.NewReader(bytes.NewReader(src))
	default:
		return fmt.Errorf("unsupported compression codec %v", codec)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, want+1))
	if n > want {
		return fmt.Errorf("%v page inflates past the %d bytes its header claims", codec, want)
	}
	if err != nil {
		return fmt.Errorf("%v: %v", codec, err)
	}
	return nil
}

// pageGuard checks the pages of a row group's column chunks before
// parquet-go reads them. A chunk without an offset index is read page
// after page, so it is walked whole up front (walkChunk). A chunk with one
// is read by jumping to pages (SeekToRow): its offset index is checked to
// tile the chunk exactly, its dictionary page up front, and each data page
// just before it is read (page), so a Load of a big checkpoint still
// touches only the pages holding its few rows.
type pageGuard struct {
	f       *parquet.File
	g       int
	b       *budget
	indexed map[int]parquet.OffsetIndex // by leaf index: chunks with an offset index
	checked map[[2]int]bool             // (leaf index, page) checked
}

// chunk prepares the check of leaf's chunk (see pageGuard).
func (gd *pageGuard) chunk(leaf *parquet.Column) error {
	cc := &gd.f.Metadata().RowGroups[gd.g].Columns[leaf.Index()]
	if cc.OffsetIndexOffset == 0 {
		return walkChunk(gd.f, gd.g, leaf, gd.b)
	}
	fail := func(format string, args ...any) error {
		return corruptf("row group %d column %s: %s", gd.g, columnName(gd.f, leaf.Index()), fmt.Sprintf(format, args...))
	}
	rgs := gd.f.RowGroups()
	fc, err := chunkOf(rgs[gd.g], leaf)
	if err != nil {
		return err
	}
	oi, err := fc.OffsetIndex()
	if err != nil {
		return fail("offset index: %v", err)
	}
	m := &cc.MetaData
	start, end := chunkSpan(m)
	rows := gd.f.Metadata().RowGroups[gd.g].NumRows
	at := m.DataPageOffset
	if m.DictionaryPageOffset > 0 {
		n, err := gd.checkPageAt(leaf, start, m.DataPageOffset-start, false, -1)
		if err != nil {
			return err
		}
		if n != 0 {
			return fail("the page before the data pages is not a dictionary page")
		}
	}
	// Every row has at least one value (a null or empty list has one
	// level), a non-repeated column exactly one; each page read is held to
	// its share (page).
	if (leaf.MaxRepetitionLevel() == 0 && m.NumValues != rows) || m.NumValues < rows {
		return fail("chunk claims %d values for %d rows", m.NumValues, rows)
	}
	if oi.NumPages() == 0 && m.NumValues > 0 {
		return fail("offset index lists no page for %d values", m.NumValues)
	}
	prev := int64(-1)
	for i := range oi.NumPages() {
		first, off, size := oi.FirstRowIndex(i), oi.Offset(i), oi.CompressedPageSize(i)
		switch {
		case off != at || size <= 0 || off+size > end:
			return fail("offset index page %d at %d (%d bytes) does not follow the page before it at %d in the chunk [%d, %d)", i, off, size, at, start, end)
		case (i == 0 && first != 0) || (i > 0 && first <= prev) || (rows > 0 && first >= rows):
			return fail("offset index page %d starts at row %d (previous %d, %d rows)", i, first, prev, rows)
		}
		prev, at = first, off+size
	}
	if at != end {
		return fail("offset index pages end at %d, the chunk at %d", at, end)
	}
	if gd.indexed == nil {
		gd.indexed, gd.checked = map[int]parquet.OffsetIndex{}, map[[2]int]bool{}
	}
	gd.indexed[leaf.Index()] = oi
	return nil
}

// pageOf returns the page of leaf's offset index holding row, or -1 when
// the chunk has no offset index (it was walked whole).
func (gd *pageGuard) pageOf(leaf *parquet.Column, row int64) int {
	if gd == nil {
		return -1
	}
	oi := gd.indexed[leaf.Index()]
	if oi == nil {
		return -1
	}
	n := oi.NumPages()
	p := sort.Search(n, func(i int) bool { return oi.FirstRowIndex(i) > row }) - 1
	return max(p, 0)
}

// page checks data page p of leaf's offset index before it is read; a
// page past the last is left to parquet-go (its end of chunk).
func (gd *pageGuard) page(leaf *parquet.Column, p int) error {
	if gd == nil {
		return nil
	}
	oi := gd.indexed[leaf.Index()]
	if oi == nil || p < 0 || p >= oi.NumPages() || gd.checked[[2]int{leaf.Index(), p}] {
		return nil
	}
	var rows int64 = -1
	if leaf.MaxRepetitionLevel() == 0 {
		next := gd.f.Metadata().RowGroups[gd.g].NumRows
		if p+1 < oi.NumPages() {
			next = oi.FirstRowIndex(p + 1)
		}
		rows = next - oi.FirstRowIndex(p)
	}
	if _, err := gd.checkPageAt(leaf, oi.Offset(p), oi.CompressedPageSize(p), true, rows); err != nil {
		return err
	}
	gd.checked[[2]int{leaf.Index(), p}] = true
	return nil
}

// checkPageAt checks the one page (header and body) taking the size bytes
// at off, a data page when data (holding rows values when rows >= 0),
// else a dictionary page. It returns the page's value count.
func (gd *pageGuard) checkPageAt(leaf *parquet.Column, off, size int64, data bool, rows int64) (int64, error) {
	fail := func(format string, args ...any) error {
		return corruptf("row group %d column %s: page at offset %d: %s", gd.g, columnName(gd.f, leaf.Index()), off, fmt.Sprintf(format, args...))
	}
	if err := gd.b.take(size, "a checkpoint page"); err != nil {
		return 0, err
	}
	defer gd.b.give(size)
	buf := getBuf(int(size))[:size]
	defer putBuf(buf)
	if n, err := gd.f.ReadAt(buf, off); int64(n) < size {
		return 0, fail("reading %d bytes: %v", size, err)
	}
	h, hl, err := parsePageHeader(buf)
	if err != nil {
		return 0, fail("header: %v", err)
	}
	if int64(hl)+int64(h.compressed) != size || h.compressed < 0 {
		return 0, fail("header and %d bytes of page do not make the %d bytes the offset index says", h.compressed, size)
	}
	if h.uncompressed < 0 || h.uncompressed > maxPageBytes {
		return 0, fail("claims to inflate to %d bytes (at most %d allowed)", h.uncompressed, maxPageBytes)
	}
	isData := h.typ == int32(format.DataPage) || h.typ == int32(format.DataPageV2)
	if isData != data {
		return 0, fail("page type %d where a %s page belongs", h.typ, map[bool]string{true: "data", false: "dictionary"}[data])
	}
	codec := format.Uncompressed
	if c := leaf.Compression(); c != nil {
		codec = c.CompressionCodec()
	}
	values, err := checkPage(&h, buf[hl:], codec, false, gd.b)
	if err != nil {
		return 0, fail("%v", err)
	}
	if rows >= 0 && values != rows {
		return 0, fail("holds %d values for the %d rows the offset index gives it", values, rows)
	}
	return values, nil
}
