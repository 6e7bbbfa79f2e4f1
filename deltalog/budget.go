package deltalog

import (
	"context"
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
// fetches. With a MemoryPool (WithMemoryPool) every byte taken is also
// reserved from the pool (pool), and close returns what is left when the
// Load ends.
type budget struct {
	limit int64 // < 0: unlimited
	used  atomic.Int64
	pool  *poolClaim // nil: no MemoryPool
}

// newBudget returns the budget for a LoadOptions.MaxLoadBytes value.
func newBudget(maxBytes int64) *budget {
	if maxBytes == 0 {
		maxBytes = DefaultMaxLoadBytes
	}
	return &budget{limit: maxBytes}
}

// take reserves n bytes for what (a short description for the error), or
// returns an ErrBudgetExceeded error without reserving anything. With a
// pool it then waits for the pool's share (see MemoryPool); when the
// Load's context ends first, it returns that error, reserving nothing.
func (b *budget) take(n int64, what string) error {
	if b == nil || n <= 0 {
		return nil
	}
	if err := b.takeOwn(n, 0, what); err != nil {
		return err
	}
	if err := b.pool.wait(n); err != nil {
		b.used.Add(-n)
		return fmt.Errorf("%s: waiting for %d bytes of the process's log-read memory (MemoryPool): %w", what, n, err)
	}
	return nil
}

// takeOwn is take without the pool. credit is what the caller already
// holds towards this take (a lease's), for the error's numbers.
func (b *budget) takeOwn(n, credit int64, what string) error {
	if b.limit < 0 {
		b.used.Add(n)
		return nil
	}
	for {
		used := b.used.Load()
		if used+n > b.limit || used+n < used {
			return fmt.Errorf("%w: %s needs %d bytes while %d of the budget of %d (LoadOptions.MaxLoadBytes) are in use",
				ErrBudgetExceeded, what, n+credit, used-credit, b.limit)
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
		b.pool.give(n)
	}
}

// close ends the Load's share of the pool, returning whatever it still
// holds (a leak on some error path would otherwise starve the process).
// It runs once every goroutine of the Load has ended.
func (b *budget) close() {
	if b != nil {
		b.pool.close()
	}
}

// meter is what a read charges its bytes to: the Load's budget, or a lease
// of it for a read under a storage request slot.
type meter interface {
	take(n int64, what string) error
	give(n int64)
}

// lease is the budget of one commit GET, which holds a storage request
// slot (StorageGates) while it reads, so its takes never wait on the pool:
// Loads waiting there while holding slots could leave none for the oldest
// Load, which the others wait on. Pool bytes are reserved ahead, outside
// the slot (reserve), as credit charged to the budget too; a take beyond
// the credit that the pool cannot grant at once fails with errPoolShort
// (short says how much more), and the caller gives up the request,
// reserves the shortfall outside the slot and sends it again. Bytes given
// back stay credit until end. Without a pool a lease is the budget.
type lease struct {
	b      *budget
	credit int64 // taken from the budget and the pool, not yet used
	short  int64 // the shortfall of the last errPoolShort
}

// lease returns a lease of b.
func (b *budget) lease() *lease { return &lease{b: b} }

// reserve takes n bytes of credit, waiting for the pool (until ctx is
// done). best: when the budget cannot hold n now, reserve nothing and let
// the takes fail as they would without a pool; otherwise that is the
// ErrBudgetExceeded error.
func (l *lease) reserve(ctx context.Context, n int64, what string, best bool) error {
	if l.b == nil || l.b.pool == nil || n <= 0 {
		return nil
	}
	if err := l.b.takeOwn(n, l.credit, what); err != nil {
		if best {
			return nil
		}
		return err
	}
	if err := l.b.pool.take(ctx, n); err != nil {
		l.b.used.Add(-n)
		return fmt.Errorf("%s: waiting for %d bytes of the process's log-read memory (MemoryPool): %w", what, n, err)
	}
	l.credit += n
	return nil
}

// take charges n bytes: from the credit, else from the budget and, at
// once or not at all, the pool.
func (l *lease) take(n int64, what string) error {
	if l.b == nil || n <= 0 {
		return nil
	}
	if l.b.pool == nil {
		return l.b.take(n, what)
	}
	if n <= l.credit {
		l.credit -= n
		return nil
	}
	need := n - l.credit
	if err := l.b.takeOwn(need, l.credit, what); err != nil {
		return err
	}
	if !l.b.pool.tryTake(need) {
		l.b.used.Add(-need)
		l.short = need
		return errPoolShort
	}
	l.credit = 0
	return nil
}

// give returns n bytes taken before: to the credit with a pool.
func (l *lease) give(n int64) {
	if l.b == nil || n <= 0 {
		return
	}
	if l.b.pool == nil {
		l.b.give(n)
		return
	}
	l.credit += n
}

// end returns the credit to the budget and the pool.
func (l *lease) end() {
	if l.b != nil && l.credit > 0 {
		l.b.give(l.credit)
		l.credit = 0
	}
}
