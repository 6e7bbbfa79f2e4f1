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
	data := make([]byte, length)
	n, err := b.r.ReadAt(data, start)
	if int64(n) < length {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	b.blocks[idx] = data
	return data, nil
}
