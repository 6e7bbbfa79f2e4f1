package deltalog

import (
	"io"
)

// checkpointBlockSize is the unit in which Parquet checkpoints bigger than
// checkpointWholeSize are fetched: one GET for the block holding the footer
// plus one per block holding a projected column chunk. A checkpoint of at
// most checkpointWholeSize is one GET. The footer of a big checkpoint is
// tens of KB and its protocol/metaData chunks a few KB, so small blocks
// read (and allocate) a fraction of what 1 MiB blocks did, for the same
// number of requests.
const (
	checkpointBlockSize = 256 << 10
	checkpointWholeSize = 1 << 20
)

// checkpointBlock returns the block size used for a checkpoint of size bytes.
func checkpointBlock(size int64) int64 {
	if size <= checkpointWholeSize {
		return max(size, 1)
	}
	return checkpointBlockSize
}

// blockReaderAt serves ReadAt calls from aligned blocks of an underlying
// io.ReaderAt (one ranged GET each), fetching every block at most once.
// parquet-go issues many small reads (footer, page headers, pages); this
// turns them into a few large requests. Not safe for concurrent use.
type blockReaderAt struct {
	r      io.ReaderAt
	size   int64
	block  int64
	blocks map[int64][]byte
	// segments are exact ranges fetched by prefetch, outside the block grid.
	segments []fetchedRange
	// budget, when set, is charged for every byte held (until release).
	budget *budget
	held   int64
}

// fetchedRange is a fetched byte range starting at off.
type fetchedRange struct {
	off  int64
	data []byte
}

// maxPrefetch is the largest range prefetch fetches exactly; a larger one
// is left to the block reads.
const maxPrefetch = 1 << 20

// prefetch makes [off, end) readable with at most one ranged GET of
// exactly that range, unless the blocks or segments already fetched cover
// it or it is larger than maxPrefetch. The column chunks of the few
// columns a checkpoint read needs are small and far apart in a big file
// (one set per row group); fetching each set exactly reads a few KB where
// the block grid would read a block per row group.
func (b *blockReaderAt) prefetch(off, end int64) error {
	end = min(end, b.size)
	if off < 0 || end <= off || end-off > maxPrefetch || b.covered(off, end) {
		return nil
	}
	if err := b.hold(end - off); err != nil {
		return err
	}
	data := getBuf(int(end - off))[:end-off]
	n, err := b.r.ReadAt(data, off)
	if int64(n) < end-off {
		putBuf(data)
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	b.segments = append(b.segments, fetchedRange{off: off, data: data})
	return nil
}

// covered reports whether [off, end) is held by fetched blocks or a segment.
func (b *blockReaderAt) covered(off, end int64) bool {
	for _, s := range b.segments {
		if s.off <= off && end <= s.off+int64(len(s.data)) {
			return true
		}
	}
	for idx := off / b.block; idx*b.block < end; idx++ {
		if _, ok := b.blocks[idx]; !ok {
			return false
		}
	}
	return true
}

// segmentAt returns the bytes of a segment from pos on, or nil.
func (b *blockReaderAt) segmentAt(pos int64) []byte {
	for _, s := range b.segments {
		if s.off <= pos && pos < s.off+int64(len(s.data)) {
			return s.data[pos-s.off:]
		}
	}
	return nil
}

// newBlockReaderAt wraps r, whose total size is size.
func newBlockReaderAt(r io.ReaderAt, size, block int64) *blockReaderAt {
	return &blockReaderAt{r: r, size: size, block: block, blocks: map[int64][]byte{}}
}

// ReadAt implements io.ReaderAt.
func (b *blockReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= b.size {
			return n, io.EOF
		}
		if seg := b.segmentAt(pos); seg != nil {
			n += copy(p[n:], seg)
			continue
		}
		idx := pos / b.block
		data, err := b.fetch(idx)
		if err != nil {
			return n, err
		}
		start := pos - idx*b.block
		if start >= int64(len(data)) {
			return n, io.EOF
		}
		n += copy(p[n:], data[start:])
	}
	return n, nil
}

// fetch returns block idx, reading it on first use.
func (b *blockReaderAt) fetch(idx int64) ([]byte, error) {
	if data, ok := b.blocks[idx]; ok {
		return data, nil
	}
	start := idx * b.block
	length := min(b.block, b.size-start)
	if err := b.hold(length); err != nil {
		return nil, err
	}
	data := getBuf(int(length))[:length]
	n, err := b.r.ReadAt(data, start)
	if int64(n) < length {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		putBuf(data)
		return nil, err
	}
	b.blocks[idx] = data
	return data, nil
}

// hold charges n more fetched bytes to the budget.
func (b *blockReaderAt) hold(n int64) error {
	if err := b.budget.take(n, "checkpoint bytes"); err != nil {
		return err
	}
	b.held += n
	return nil
}

// release returns the fetched bytes to the buffer pool. The reader must
// not be used afterwards, and no one may hold bytes ReadAt did not copy
// out (ReadAt always copies).
func (b *blockReaderAt) release() {
	for _, data := range b.blocks {
		putBuf(data)
	}
	clear(b.blocks)
	for _, s := range b.segments {
		putBuf(s.data)
	}
	b.segments = nil
	b.budget.give(b.held)
	b.held = 0
}
