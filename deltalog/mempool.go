package deltalog

import (
	"container/list"
	"context"
	"errors"
	"slices"
	stdsync "sync"
	"sync/atomic"
	"time"
)

// MemoryPool bounds the bytes of log files that all the Loads and Refreshes
// of a process hold at once, over every Table given it (WithMemoryPool).
// Each Load's own budget (LoadOptions.MaxLoadBytes) bounds one table; the
// pool bounds their sum, which without it is the number of tables read at
// once times that budget.
//
// Every byte a Load charges to its budget is also reserved from the pool,
// and returned to both when released; whatever a Load still holds when it
// ends is returned then. A reservation the pool cannot grant waits (until
// it can, or the Load's context is done: the Load then fails with the
// context's error). Running out of pool never fails a table: it is not the
// table's fault that others are being read. A table that by itself needs
// more than its own budget still fails with ErrBudgetExceeded.
//
// Waiting Loads that each hold part of the pool could wait for each other
// forever. So the oldest active Load, the first of those that reserved
// from the pool and have not ended, is always granted, even over the
// limit: one Load always progresses, and when it ends the next oldest is
// granted. Every other Load is granted only what fits under the limit, so
// the Loads but the oldest never hold more than the limit together, and
// the pool's bytes in use are at most
//
//	limit + the oldest Load's own budget (LoadOptions.MaxLoadBytes)
//
// (with the same budget for every Table, as the daemon configures it:
// storage.max_read_mib + storage.max_load_mib). A Load with no budget of
// its own (a negative MaxLoadBytes) makes that bound void while it is the
// oldest.
//
// A Load never waits on the pool while it holds a storage request slot
// (StorageGates): a commit's bytes are reserved before its GET is sent,
// and a read that turns out to need more than reserved, which the pool
// cannot grant at once, is sent again after the wait. Otherwise Loads
// waiting on the pool could hold every slot the oldest Load needs.
type MemoryPool struct {
	limit int64 // <= 0: no limit (the pool only counts)

	mu    stdsync.Mutex
	inUse int64
	peak  int64
	// active are the claims (Loads) that reserved from the pool and have
	// not ended, in admission order: the front is the oldest.
	active list.List
	// waiters are the reservations waiting, in arrival order.
	waiters []*poolWaiter

	waitNanos atomic.Int64
}

// NewMemoryPool returns a pool of limitBytes for the log reads of every
// Table given it by WithMemoryPool. limitBytes <= 0 means no limit: the
// pool only counts the bytes in use.
func NewMemoryPool(limitBytes int64) *MemoryPool {
	return &MemoryPool{limit: max(limitBytes, 0)}
}

// Limit returns the pool's limit in bytes (0: none).
func (p *MemoryPool) Limit() int64 { return p.limit }

// InUse returns the bytes the process's log reads hold from the pool now
// (for metrics and tests).
func (p *MemoryPool) InUse() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUse
}

// Peak returns the most bytes ever in use at once.
func (p *MemoryPool) Peak() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// Waiting returns how many reservations are waiting for the pool now.
func (p *MemoryPool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters)
}

// WaitTime returns the total time reservations have waited for the pool
// (waits still going on are added when they end).
func (p *MemoryPool) WaitTime() time.Duration { return time.Duration(p.waitNanos.Load()) }

// poolClaim is one Load's (or Refresh's) share of a pool: what it holds,
// and its place in the admission order once it has reserved anything.
type poolClaim struct {
	pool *MemoryPool
	ctx  context.Context // the Load's: a wait ends when it is done
	// Guarded by pool.mu.
	elem   *list.Element // in pool.active; nil before the first reservation
	held   int64
	closed bool
}

// poolWaiter is one reservation waiting for the pool.
type poolWaiter struct {
	c       *poolClaim
	n       int64
	granted bool
	ready   chan struct{} // closed when granted
}

// claim returns the share of a Load whose context is ctx.
func (p *MemoryPool) claim(ctx context.Context) *poolClaim {
	if p == nil {
		return nil
	}
	return &poolClaim{pool: p, ctx: ctx}
}

// fits reports whether c may be granted n more bytes now: c is the oldest
// active claim, or n fits under the limit. Called with p.mu held, c admitted.
func (p *MemoryPool) fits(c *poolClaim, n int64) bool {
	return p.limit <= 0 || p.active.Front() == c.elem || n <= p.limit-p.inUse
}

// grant gives c n bytes. Called with p.mu held.
func (p *MemoryPool) grant(c *poolClaim, n int64) {
	p.inUse += n
	c.held += n
	p.peak = max(p.peak, p.inUse)
}

// admit puts c in the admission order on its first reservation. Called
// with p.mu held.
func (c *poolClaim) admit() {
	if c.elem == nil {
		c.elem = c.pool.active.PushBack(c)
	}
}

// tryTake reserves n bytes if the pool grants them at once, without
// waiting. A claim that has ended reserves nothing (and succeeds).
func (c *poolClaim) tryTake(n int64) bool {
	if c == nil || n <= 0 {
		return true
	}
	p := c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.closed {
		return true
	}
	c.admit()
	if !p.fits(c, n) {
		return false
	}
	p.grant(c, n)
	return true
}

// wait is take until the Load's context is done.
func (c *poolClaim) wait(n int64) error {
	if c == nil {
		return nil
	}
	return c.take(c.ctx, n)
}

// take reserves n bytes, waiting until the pool grants them or ctx is
// done, whose error it then returns.
func (c *poolClaim) take(ctx context.Context, n int64) error {
	if c == nil || n <= 0 {
		return nil
	}
	p := c.pool
	p.mu.Lock()
	if c.closed {
		p.mu.Unlock()
		return nil
	}
	c.admit()
	if p.fits(c, n) {
		p.grant(c, n)
		p.mu.Unlock()
		return nil
	}
	if err := ctx.Err(); err != nil {
		p.mu.Unlock()
		return err
	}
	w := &poolWaiter{c: c, n: n, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	start := time.Now()
	defer func() { p.waitNanos.Add(int64(time.Since(start))) }()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted {
		return nil // granted as the context ended: the Load holds it until it ends
	}
	for i, o := range p.waiters {
		if o == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			break
		}
	}
	return ctx.Err()
}

// give returns n bytes taken before.
func (c *poolClaim) give(n int64) {
	if c == nil || n <= 0 {
		return
	}
	p := c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.closed {
		return
	}
	n = min(n, c.held)
	p.inUse -= n
	c.held -= n
	p.wake()
}

// close ends the claim: whatever it still holds goes back to the pool,
// and it leaves the admission order (the next oldest claim is then always
// granted). Further takes reserve nothing. It runs when the Load ends,
// after every goroutine of the Load has.
func (c *poolClaim) close() {
	if c == nil {
		return
	}
	p := c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	p.inUse -= c.held
	c.held = 0
	if c.elem != nil {
		p.active.Remove(c.elem)
		c.elem = nil
	}
	// A reservation of this claim still waiting (none, when every
	// goroutine of the Load has ended) is let go holding nothing.
	p.release(func(w *poolWaiter) bool { return w.c == c })
	p.wake()
}

// wake grants the waiting reservations that fit now, oldest arrival first.
// Called with p.mu held, after bytes were returned or the oldest claim
// changed.
func (p *MemoryPool) wake() {
	if len(p.waiters) == 0 {
		return
	}
	p.release(func(w *poolWaiter) bool {
		if !p.fits(w.c, w.n) {
			return false
		}
		p.grant(w.c, w.n)
		return true
	})
}

// release ends, in arrival order, every waiting reservation done says is
// done with (granted, or let go holding nothing), and keeps the others
// waiting. Called with p.mu held.
func (p *MemoryPool) release(done func(*poolWaiter) bool) {
	p.waiters = slices.DeleteFunc(p.waiters, func(w *poolWaiter) bool {
		if !done(w) {
			return false
		}
		w.granted = true
		close(w.ready)
		return true
	})
}

// errPoolShort is a take under a storage request slot (a lease) that the
// pool could not grant at once: the request is given up, the shortfall
// reserved outside the slot, and the request sent again.
var errPoolShort = errors.New("the process's log-read memory pool is short; reserving before the request is sent again")
