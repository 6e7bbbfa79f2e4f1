package deltalog

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// This file reads the few rows of a checkpoint row group that hold a
// protocol, metaData or domainMetadata action, at a cost proportional to
// those rows rather than to the row group.
//
// A single-file writer (parquet-go with default options, delta-rs, Spark
// below its row-group size limit) puts protocol and metaData in the same
// row group as every add, so row-group statistics cannot skip anything and
// each protocol/metaData leaf column holds one value per row, all but one
// of them null. Two steps keep the cost down:
//
//  1. presentRows finds the rows where the action is present from one
//     non-repeated "key" leaf (protocol.minReaderVersion, metaData.id,
//     domainMetadata.domain) by scanning definition levels only, never
//     materializing values. With a page index (column index + offset
//     index, written by default by parquet-go, arrow-rs/delta-rs and
//     parquet-mr/Spark) only the pages the column index does not mark
//     all-null are read; without one, every page of that one leaf is
//     decoded but only its level bytes are looked at.
//  2. readLeafRows reads each other leaf at those rows only: SeekToRow
//     jumps to the page holding the row (directly with an offset index,
//     by decoding and dropping earlier pages without one), and only the
//     values of the wanted row are kept.

// chunkOf returns the column chunk of leaf in rg.
func chunkOf(rg parquet.RowGroup, leaf *parquet.Column) (*parquet.FileColumnChunk, error) {
	if !leaf.Leaf() {
		return nil, fmt.Errorf("%w: %s is not a leaf column", errNoLeaf, leaf.Name())
	}
	chunks := rg.ColumnChunks()
	if leaf.Index() < 0 || leaf.Index() >= len(chunks) {
		return nil, fmt.Errorf("%w: column %s missing from row group", ErrCorrupt, leaf.Name())
	}
	fc, ok := chunks[leaf.Index()].(*parquet.FileColumnChunk)
	if !ok {
		return nil, fmt.Errorf("%w: column %s: unexpected chunk type %T", ErrCorrupt, leaf.Name(), chunks[leaf.Index()])
	}
	return fc, nil
}

// filePages opens the page reader of fc. Its offset index, when the file
// has one, is loaded first so that SeekToRow jumps straight to a page.
func filePages(fc *parquet.FileColumnChunk) (*parquet.FilePages, error) {
	_, _ = fc.OffsetIndex() // absent or unreadable: SeekToRow scans pages instead
	fp, ok := fc.Pages().(*parquet.FilePages)
	if !ok {
		return nil, fmt.Errorf("%w: unexpected page reader", ErrCorrupt)
	}
	return fp, nil
}

// pageIndex returns fc's column and offset indexes when both are present
// and agree on the page count; otherwise nil, nil.
func pageIndex(fc *parquet.FileColumnChunk) (parquet.ColumnIndex, parquet.OffsetIndex) {
	ci, err := fc.ColumnIndex()
	if err != nil || ci == nil {
		return nil, nil
	}
	oi, err := fc.OffsetIndex()
	if err != nil || oi == nil || oi.NumPages() != ci.NumPages() {
		return nil, nil
	}
	return ci, oi
}

// readPage reads the next page, mapping errors to ErrCorrupt. It returns
// nil, nil at the end of the chunk.
func readPage(fp *parquet.FilePages) (parquet.Page, error) {
	p, err := fp.ReadPage()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return p, nil
}

// presentRows returns the indexes, within the row group, of the rows where
// the non-repeated leaf of fc has a value (definition level maxDef), at
// most limit of them (limit <= 0: all).
func presentRows(gd *pageGuard, leaf *parquet.Column, fc *parquet.FileColumnChunk, maxDef, limit int) ([]int64, error) {
	fp, err := filePages(fc)
	if err != nil {
		return nil, err
	}
	defer fp.Close()
	var rows []int64
	full := func() bool { return limit > 0 && len(rows) >= limit }
	scan := func(p parquet.Page, first int64) {
		defs := p.DefinitionLevels()
		if defs == nil { // required leaf: every row has a value
			for k := int64(0); k < p.NumRows() && !full(); k++ {
				rows = append(rows, first+k)
			}
			return
		}
		if p.NumNulls() == int64(len(defs)) {
			return
		}
		for k, d := range defs {
			if int(d) >= maxDef {
				rows = append(rows, first+int64(k))
				if full() {
					return
				}
			}
		}
	}
	if ci, oi := pageIndex(fc); ci != nil {
		for i := range ci.NumPages() {
			if ci.NullPage(i) {
				continue
			}
			first := oi.FirstRowIndex(i)
			if err := gd.page(leaf, i); err != nil {
				return nil, err
			}
			if err := fp.SeekToRow(first); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			p, err := readPage(fp)
			if err != nil {
				return nil, err
			}
			if p == nil {
				return nil, fmt.Errorf("%w: page %d of the offset index is past the end of the column chunk", ErrCorrupt, i)
			}
			scan(p, first)
			parquet.Release(p)
			if full() {
				break
			}
		}
		return rows, nil
	}
	var base int64
	for k := 0; !full(); k++ {
		if err := gd.page(leaf, k); err != nil {
			return nil, err
		}
		p, err := readPage(fp)
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		scan(p, base)
		base += p.NumRows()
		parquet.Release(p)
	}
	return rows, nil
}

// valueBatch is how many values are read from a page at a time while
// collecting one row; a row of a protocol/metaData leaf has a handful.
const valueBatch = 32

// readLeafRows reads the values of leaf at the given rows (ascending,
// within rg). Row j of the result holds the values of rows[j]. A nil leaf
// yields nil.
func readLeafRows(gd *pageGuard, rg parquet.RowGroup, leaf *parquet.Column, rows []int64) (*column, error) {
	if leaf == nil {
		return nil, nil
	}
	fc, err := chunkOf(rg, leaf)
	if err != nil {
		return nil, err
	}
	col := &column{rows: make([][]parquet.Value, len(rows)), maxDef: leaf.MaxDefinitionLevel()}
	if len(rows) == 0 {
		return col, nil
	}
	fp, err := filePages(fc)
	if err != nil {
		return nil, err
	}
	defer fp.Close()
	buf := make([]parquet.Value, valueBatch)
	for j, row := range rows {
		first := gd.pageOf(leaf, row)
		if err := fp.SeekToRow(row); err != nil {
			return nil, fmt.Errorf("%w: column %s row %d: %v", ErrCorrupt, leaf.Name(), row, err)
		}
		check := func(k int) error { return gd.page(leaf, first+k) }
		if first < 0 {
			check = nil // no offset index: the whole chunk was checked
		}
		vals, err := collectRow(fp, buf, leaf.MaxRepetitionLevel() > 0, check)
		if err != nil {
			return nil, fmt.Errorf("column %s row %d: %w", leaf.Name(), row, err)
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("%w: column %s has no row %d", ErrCorrupt, leaf.Name(), row)
		}
		col.rows[j] = vals
	}
	return col, nil
}

// collectRow returns the values of the row at which fp is positioned: the
// first value read and, for a repeated leaf, every following one with a
// repetition level above zero, across pages if the row continues on the
// next one. check, when set, is called with k before the k-th page is read
// (0: the page fp is positioned in).
func collectRow(fp *parquet.FilePages, buf []parquet.Value, repeated bool, check func(k int) error) ([]parquet.Value, error) {
	var out []parquet.Value
	for k := 0; ; k++ {
		if check != nil {
			if err := check(k); err != nil {
				return nil, err
			}
		}
		p, err := readPage(fp)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return out, nil
		}
		done, err := collectFromPage(p, buf, &out, repeated)
		parquet.Release(p)
		if err != nil || done {
			return out, err
		}
	}
}

// collectFromPage appends the values of the current row from p to out and
// reports whether the row ended inside p.
func collectFromPage(p parquet.Page, buf []parquet.Value, out *[]parquet.Value, repeated bool) (bool, error) {
	r := p.Values()
	for {
		want := buf
		if !repeated {
			want = buf[:1] // one value per row
		}
		n, err := r.ReadValues(want)
		for _, v := range want[:n] {
			if v.RepetitionLevel() == 0 && len(*out) > 0 {
				return true, nil
			}
			if v.RepetitionLevel() != 0 && len(*out) == 0 {
				continue // tail of a row that started on an earlier page
			}
			*out = append(*out, v.Clone())
			if !repeated {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
}
