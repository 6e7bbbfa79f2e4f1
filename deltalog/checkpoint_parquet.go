package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// readParquetActions reads the protocol and metaData rows (and the
// domainMetadata rows when wantDomains) of a Parquet checkpoint.
//
// Only the leaf columns of those actions are read; add, remove and every
// other column chunk is never touched, and row groups whose statistics say
// the action is absent are skipped. Within a row group only the rows that
// hold the action are read (checkpoint_leaf.go), so the cost follows the
// protocol/metaData rows, not the adds sharing their row group. Reading
// stops after the row group in which both protocol and metaData were found
// (unless domains are wanted). Columns are read as raw leaf values
// with their repetition and definition levels and assembled here, which
// works whatever the writer named the MAP and LIST groups (delta-rs 0.17
// writes MAP groups named "entries", on which parquet-go's schema mapping
// panics). Any panic inside parquet-go is recovered into ErrCorrupt.
func readParquetActions(r io.ReaderAt, size int64, wantDomains bool) (*fileActions, error) {
	return readCheckpoint(r, size, wantDomains, nil)
}

// readCheckpoint is readParquetActions holding at most what b allows (nil:
// no limit) of footer, chunk and page bytes while it checks the file.
func readCheckpoint(r io.ReaderAt, size int64, wantDomains bool, b *budget) (fa *fileActions, err error) {
	defer func() {
		if p := recover(); p != nil {
			fa, err = nil, fmt.Errorf("%w: parquet reader failed: %v", ErrCorrupt, p)
		}
	}()
	if err := checkFooter(r, size, b); err != nil {
		return nil, err
	}
	// SkipMagicBytes: the head magic is 4 bytes at offset 0, far from
	// everything else a checkpoint read needs (footer, page index, the
	// protocol/metaData chunks), so reading it cost a request of its own
	// (a whole 256 KiB block on an object store), one round trip in the
	// chain before the protocol and metaData could be read. checkFooter
	// has checked the tail magic and footer, which is what readers go by.
	f, err := parquet.OpenFile(r, size, parquet.SkipMagicBytes(true), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, parquetErr(err)
	}
	if err := checkLayout(f, size); err != nil {
		return nil, err
	}
	fa = &fileActions{}
	root := f.Root()
	pf, _ := r.(prefetcher)
	for i, rg := range f.RowGroups() {
		leaves, err := wantedLeaves(f, i, rg, root, fa, wantDomains, b)
		if err != nil {
			return nil, err
		}
		if pf != nil {
			if err := prefetchLeaves(pf, f, i, leaves); err != nil {
				return nil, parquetErr(err)
			}
		}
		gd := &pageGuard{f: f, g: i, b: b}
		for _, leaf := range leaves {
			if err := gd.chunk(leaf); err != nil {
				return nil, err
			}
		}
		if err := readRowGroup(gd, f, i, rg, root, fa, wantDomains); err != nil {
			return nil, parquetErr(err)
		}
		if fa.protocol != nil && fa.metadata != nil && !wantDomains {
			break
		}
	}
	return fa, nil
}

// parquetErr is the error for a failed read: ErrBudgetExceeded when the
// budget ran out underneath parquet-go (which may format the error it got
// from a read away), else ErrCorrupt.
func parquetErr(err error) error {
	if errors.Is(err, ErrBudgetExceeded) {
		return err
	}
	if i := strings.Index(err.Error(), ErrBudgetExceeded.Error()); i >= 0 {
		return fmt.Errorf("%w%s", ErrBudgetExceeded, err.Error()[i+len(ErrBudgetExceeded.Error()):])
	}
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// prefetcher is implemented by blockReaderAt.
type prefetcher interface {
	prefetch(off, end int64) error
}

// wantedLeaves returns the leaf columns readRowGroup may read in row group
// i: every leaf of each action still wanted whose key leaf may hold a
// value there (row-group statistics and, when present, the column index
// do not say all-null). The indexes of each key leaf are checked before
// parquet-go decodes them.
func wantedLeaves(f *parquet.File, i int, rg parquet.RowGroup, root *parquet.Column, fa *fileActions, wantDomains bool, b *budget) ([]*parquet.Column, error) {
	type action struct {
		name, key string
		want      bool
	}
	actions := []action{
		{"protocol", "minReaderVersion", fa.protocol == nil},
		{"metaData", "id", fa.metadata == nil},
		{"domainMetadata", "domain", wantDomains},
	}
	ncols := len(f.Metadata().RowGroups[i].Columns)
	var out []*parquet.Column
	for _, a := range actions {
		c := root.Column(a.name)
		key := child(c, a.key)
		if !a.want || key == nil || !key.Leaf() || allNull(f, i, key) {
			continue
		}
		if key.Index() >= 0 && key.Index() < ncols {
			if err := checkIndexes(f, i, key, true, b); err != nil {
				return nil, err
			}
		}
		if indexSaysAllNull(rg, key) {
			continue
		}
		for _, leaf := range leavesOf(c) {
			if leaf.Index() < 0 || leaf.Index() >= ncols {
				continue // chunkOf reports it when read
			}
			if leaf != key {
				if err := checkIndexes(f, i, leaf, false, b); err != nil {
					return nil, err
				}
			}
			out = append(out, leaf)
		}
	}
	return out, nil
}

// prefetchLeaves fetches, in one request, the byte span of the column
// chunks of leaves in row group i.
func prefetchLeaves(pf prefetcher, f *parquet.File, i int, leaves []*parquet.Column) error {
	start, end := int64(-1), int64(-1)
	cols := f.Metadata().RowGroups[i].Columns
	for _, leaf := range leaves {
		s, e := chunkSpan(&cols[leaf.Index()].MetaData)
		if start < 0 || s < start {
			start = s
		}
		end = max(end, e)
	}
	if start < 0 {
		return nil
	}
	return pf.prefetch(start, end)
}

// indexSaysAllNull reports whether the column index of leaf in rg marks
// every page all-null. Without a column index it returns false.
func indexSaysAllNull(rg parquet.RowGroup, leaf *parquet.Column) bool {
	fc, err := chunkOf(rg, leaf)
	if err != nil {
		return false
	}
	ci, _ := pageIndex(fc)
	if ci == nil || ci.NumPages() == 0 {
		return false
	}
	for p := range ci.NumPages() {
		if !ci.NullPage(p) {
			return false
		}
	}
	return true
}

// leavesOf returns the leaf columns under c.
func leavesOf(c *parquet.Column) []*parquet.Column {
	if c == nil {
		return nil
	}
	if c.Leaf() {
		return []*parquet.Column{c}
	}
	var out []*parquet.Column
	for _, k := range c.Columns() {
		out = append(out, leavesOf(k)...)
	}
	return out
}

// readRowGroup adds the actions found in one row group to fa.
func readRowGroup(gd *pageGuard, f *parquet.File, i int, rg parquet.RowGroup, root *parquet.Column, fa *fileActions, wantDomains bool) error {
	if c := root.Column("protocol"); c != nil && fa.protocol == nil {
		if err := readProtocolRows(gd, f, i, rg, c, fa); err != nil {
			return fmt.Errorf("protocol column: %w", err)
		}
	}
	if c := root.Column("metaData"); c != nil && fa.metadata == nil {
		if err := readMetadataRows(gd, f, i, rg, c, fa); err != nil {
			return fmt.Errorf("metaData column: %w", err)
		}
	}
	if c := root.Column("domainMetadata"); c != nil && wantDomains {
		if err := readDomainRows(gd, f, i, rg, c, fa); err != nil {
			return fmt.Errorf("domainMetadata column: %w", err)
		}
	}
	return nil
}

// allNull reports whether the row group's statistics say leaf holds only nulls.
func allNull(f *parquet.File, rgIndex int, leaf *parquet.Column) bool {
	rgs := f.Metadata().RowGroups
	if rgIndex >= len(rgs) || leaf.Index() >= len(rgs[rgIndex].Columns) {
		return false
	}
	md := rgs[rgIndex].Columns[leaf.Index()].MetaData
	return md.NumValues > 0 && md.Statistics.NullCount == md.NumValues
}

// column holds the values of one leaf column at a few selected rows of a
// row group (see readLeafRows); rows[j] are the values of the j-th
// selected row.
type column struct {
	rows   [][]parquet.Value
	maxDef int
}

// row returns the values of row i, or nil when the column is absent.
func (c *column) row(i int) []parquet.Value {
	if c == nil || i >= len(c.rows) {
		return nil
	}
	return c.rows[i]
}

// scalar returns the single value of row i when it is defined.
func (c *column) scalar(i int) (parquet.Value, bool) {
	vals := c.row(i)
	if len(vals) == 0 || vals[0].DefinitionLevel() < c.maxDef || vals[0].IsNull() {
		return parquet.Value{}, false
	}
	return vals[0], true
}

// str returns row i as a string.
func (c *column) str(i int) (string, bool) {
	v, ok := c.scalar(i)
	if !ok {
		return "", false
	}
	return string(v.ByteArray()), true
}

// integer returns row i as an int64 (INT32 or INT64 columns).
func (c *column) integer(i int) (int64, bool) {
	v, ok := c.scalar(i)
	if !ok {
		return 0, false
	}
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), true
	case parquet.Int64:
		return v.Int64(), true
	}
	return 0, false
}

// boolean returns row i as a bool.
func (c *column) boolean(i int) (bool, bool) {
	v, ok := c.scalar(i)
	if !ok || v.Kind() != parquet.Boolean {
		return false, false
	}
	return v.Boolean(), true
}

// strings returns the elements of a list<string> (or map keys) in row i.
// present is false when the list itself is null; listDef is the definition
// level at which the list is present.
func (c *column) strings(i, listDef int) (out []string, present bool) {
	vals := c.row(i)
	if len(vals) == 0 || vals[0].DefinitionLevel() < listDef {
		return nil, false
	}
	out = []string{}
	for _, v := range vals {
		if v.DefinitionLevel() == c.maxDef && !v.IsNull() {
			out = append(out, string(v.ByteArray()))
		}
	}
	return out, true
}

// entries zips a map's key and value columns for row i. Null values
// become "". present is false when the map itself is null.
func entries(keys, values *column, i, mapDef int) (map[string]string, bool) {
	kv := keys.row(i)
	if len(kv) == 0 || kv[0].DefinitionLevel() < mapDef {
		return nil, false
	}
	vv := values.row(i)
	m := map[string]string{}
	for j, k := range kv {
		if k.DefinitionLevel() < keys.maxDef || k.IsNull() {
			continue
		}
		val := ""
		if j < len(vv) && vv[j].DefinitionLevel() == values.maxDef && !vv[j].IsNull() {
			val = string(vv[j].ByteArray())
		}
		m[string(k.ByteArray())] = val
	}
	return m, true
}

// errNoLeaf is returned when a checkpoint column lacks an expected field
// or has it in a shape the protocol does not allow (a group where a leaf
// belongs, a repeated key): the file is corrupt, not unreadable for now.
var errNoLeaf = fmt.Errorf("%w: unexpected column layout", ErrCorrupt)

// rawObject builds a JSON object from fields in order, skipping nil values.
type rawObject struct{ buf bytes.Buffer }

func (o *rawObject) add(key string, value any) {
	if value == nil {
		return
	}
	b, err := json.Marshal(value)
	if err != nil {
		return
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	o.buf.Write(b)
}

func (o *rawObject) bytes() json.RawMessage {
	if o.buf.Len() == 0 {
		return json.RawMessage("{}")
	}
	o.buf.WriteByte('}')
	return json.RawMessage(o.buf.Bytes())
}
