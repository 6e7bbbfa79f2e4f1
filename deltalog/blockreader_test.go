package deltalog

import (
	"bytes"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// countingReaderAt counts ReadAt calls.
type countingReaderAt struct {
	r     io.ReaderAt
	calls int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.calls++
	return c.r.ReadAt(p, off)
}

func TestBlockReaderAt(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		off, n int
		want   string
		err    error
		calls  int
	}{
		{0, 3, "012", nil, 1},
		{2, 5, "23456", nil, 2},
		{8, 2, "89", nil, 3},
		{8, 5, "89", io.EOF, 3},
		{1, 2, "12", nil, 3},
	}
	c := &countingReaderAt{r: bytes.NewReader(data)}
	br := newBlockReaderAt(c, int64(len(data)), 4)
	for _, tt := range tests {
		p := make([]byte, tt.n)
		n, err := br.ReadAt(p, int64(tt.off))
		if string(p[:n]) != tt.want || err != tt.err || c.calls != tt.calls {
			t.Errorf("ReadAt(%d,%d) = %q, %v after %d calls; want %q, %v after %d", tt.off, tt.n, p[:n], err, c.calls, tt.want, tt.err, tt.calls)
		}
	}
}

// TestCheckpointBlockSizes: the same checkpoint read through tiny blocks
// and one big block gives the same actions.
func TestCheckpointBlockSizes(t *testing.T) {
	for _, data := range corpusFiles(t, kindCheckpoint, kindMultiCheckpoint) {
		size := int64(len(data))
		big, err1 := readParquetActions(newBlockReaderAt(bytes.NewReader(data), size, checkpointBlockSize), size, true)
		small, err2 := readParquetActions(newBlockReaderAt(bytes.NewReader(data), size, 333), size, true)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			continue
		}
		if diff := cmp.Diff(big, small, cmp.AllowUnexported(fileActions{}, domainAction{})); diff != "" {
			t.Errorf("actions differ (-1MiB +333B):\n%s", diff)
		}
	}
}
