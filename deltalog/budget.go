package deltalog

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrBudgetExceeded means reading the table's log would hold more bytes in
// memory at once than LoadOptions.MaxLoadBytes allows. The LogError names
// the file being read when the budget ran out.
var ErrBudgetExceeded = errors.New("per-table memory budget exceeded")

// DefaultMaxLoadBytes is the memory budget of one Load or Refresh when
// LoadOptions.MaxLoadBytes is 0. A healthy table needs a few MiB: the
// commits fetched ahead (at most 16 MiB of them), the checkpoint blocks
// holding its footer and protocol/metaData chunks, and the largest
// protocol/metaData/domainMetadata action (a schema of tens of thousands
// of columns is a few MiB).
const DefaultMaxLoadBytes = 256 << 20

// budget counts the bytes one Load holds in memory at once where it reads
// them: whole commits, streamed commit lines kept, checkpoint blocks and
// the pages decoded from them. It is shared by the Load's concurrent
// fetches.
type budget struct {
	limit int64 // < 0: unlimited
	used  atomic.Int64
}

// newBudget returns the budget for a LoadOptions.MaxLoadBytes value.
func newBudget(maxBytes int64) *budget {
	if maxBytes == 0 {
		maxBytes = DefaultMaxLoadBytes
	}
	return &budget{limit: maxBytes}
}

// take reserves n bytes for what (a short description for the error), or
// returns an ErrBudgetExceeded error without reserving anything.
func (b *budget) take(n int64, what string) error {
	if b == nil || n <= 0 {
		return nil
	}
	if b.limit < 0 {
		b.used.Add(n)
		return nil
	}
	for {
		used := b.used.Load()
		if used+n > b.limit || used+n < used {
			return fmt.Errorf("%w: %s needs %d bytes while %d of the budget of %d (LoadOptions.MaxLoadBytes) are in use",
				ErrBudgetExceeded, what, n, used, b.limit)
		}
		if b.used.CompareAndSwap(used, used+n) {
			return nil
		}
	}
}

// give returns n bytes taken before.
func (b *budget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}
