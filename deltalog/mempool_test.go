package deltalog

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	stdsync "sync"
	"testing"
)

// pooledBudget is a Load's budget of limit bytes sharing p, as loadBudget
// makes it.
func pooledBudget(ctx context.Context, p *MemoryPool, limit int64) *budget {
	b := newBudget(limit)
	b.pool = p.claim(ctx)
	return b
}

// waitingClaims returns how many distinct claims have a reservation
// waiting on p.
func waitingClaims(p *MemoryPool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[*poolClaim]bool{}
	for _, w := range p.waiters {
		seen[w.c] = true
	}
	return len(seen)
}

// untilWaiting yields until n claims wait on p: a state the test waits
// for, not a time it bets on.
func untilWaiting(t *testing.T, p *MemoryPool, n int) {
	t.Helper()
	for waitingClaims(p) < n {
		runtime.Gosched()
	}
}

// TestMemoryPoolOldestAlwaysGranted: five Loads each hold 2 of a pool of
// 10 units, then all want 4 more in steps of 2. Granting only what fits
// would leave all five waiting for each other forever; the oldest is
// granted over the limit, ends, and so on down the admission order. The
// test completes (under -race too), and the pool's peak stays within the
// limit plus one Load's budget.
func TestMemoryPoolOldestAlwaysGranted(t *testing.T) {
	const limit, perLoad, loads = 10, 6, 5
	ctx := context.Background()
	p := NewMemoryPool(limit)
	bs := make([]*budget, loads)
	for i := range bs {
		bs[i] = pooledBudget(ctx, p, perLoad)
		if err := bs[i].take(2, "step 1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.InUse(); got != limit {
		t.Fatalf("in use after every Load's first step: %d, want %d", got, limit)
	}
	var wg stdsync.WaitGroup
	errs := make([]error, loads)
	for i, b := range bs {
		wg.Go(func() {
			defer b.close()
			for step := 0; step < 2; step++ {
				if err := b.take(2, "a step"); err != nil {
					errs[i] = err
					return
				}
			}
			b.give(perLoad)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Load %d: %v", i, err)
		}
	}
	// Nothing fits until the oldest gives: it alone went to 10 + 4.
	if peak := p.Peak(); peak < limit+4 || peak > limit+perLoad {
		t.Errorf("peak in use %d, want between %d (the oldest granted over the limit) and %d (limit + one Load's budget)", peak, limit+4, limit+perLoad)
	}
	if got := p.InUse(); got != 0 {
		t.Errorf("in use after every Load ended: %d, want 0", got)
	}
}

// TestMemoryPoolManyLoadsComplete: Loads admitted in any order, taking and
// giving in random steps, all complete, and at no time does the pool hold
// more than its limit plus one Load's budget.
func TestMemoryPoolManyLoadsComplete(t *testing.T) {
	const limit, perLoad, loads = 10, 6, 24
	p := NewMemoryPool(limit)
	var wg stdsync.WaitGroup
	for i := range loads {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			b := pooledBudget(context.Background(), p, perLoad)
			defer b.close()
			var held int64
			for range 20 {
				if n := rng.Int64N(3) + 1; held+n <= perLoad {
					if err := b.take(n, "a step"); err != nil {
						t.Error(err)
						return
					}
					held += n
				}
				if held > 0 && rng.IntN(3) == 0 {
					n := rng.Int64N(held) + 1
					b.give(n)
					held -= n
				}
			}
			// held is left to close: a Load ending with bytes still
			// charged gives them back then.
		})
	}
	wg.Wait()
	if peak := p.Peak(); peak > limit+perLoad {
		t.Errorf("peak in use %d, over the limit %d + one Load's budget %d", peak, limit, perLoad)
	}
	if got := p.InUse(); got != 0 {
		t.Errorf("in use after every Load ended: %d, want 0", got)
	}
}

// TestMemoryPoolWaitCancelled: a Load waiting for the pool ends with its
// context's error, holding nothing, and the wait is counted.
func TestMemoryPoolWaitCancelled(t *testing.T) {
	p := NewMemoryPool(10)
	first := pooledBudget(context.Background(), p, 10)
	if err := first.take(10, "all of it"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	second := pooledBudget(ctx, p, 10)
	done := make(chan error)
	go func() { done <- second.take(5, "half") }()
	untilWaiting(t, p, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v, want context.Canceled", err)
	}
	if got := second.used.Load(); got != 0 {
		t.Errorf("the cancelled Load's budget holds %d, want 0", got)
	}
	if got := p.InUse(); got != 10 {
		t.Errorf("in use %d, want 10 (the first Load's)", got)
	}
	if p.WaitTime() <= 0 || p.Waiting() != 0 {
		t.Errorf("wait time %v, waiting %d: want the wait counted and over", p.WaitTime(), p.Waiting())
	}
	second.close()
	first.close()
	if got := p.InUse(); got != 0 {
		t.Errorf("in use after both ended: %d, want 0", got)
	}
}

// TestMemoryPoolLeaseNeverWaits: a take under a request slot (a lease)
// that the pool cannot grant fails at once with the shortfall, charging
// nothing; the shortfall reserved outside the slot, the same take is
// served from the credit, and the credit goes back when the lease ends.
func TestMemoryPoolLeaseNeverWaits(t *testing.T) {
	p := NewMemoryPool(10)
	first := pooledBudget(context.Background(), p, 10)
	if err := first.take(8, "most of it"); err != nil {
		t.Fatal(err)
	}
	b := pooledBudget(context.Background(), p, 10)
	defer b.close()
	ls := b.lease()
	if err := ls.reserve(context.Background(), 2, "the hint", true); err != nil {
		t.Fatal(err)
	}
	if err := ls.take(6, "a long line"); !errors.Is(err, errPoolShort) || ls.short != 4 {
		t.Fatalf("take beyond the pool under a lease: %v (short %d), want errPoolShort short 4", err, ls.short)
	}
	if b.used.Load() != 2 || p.InUse() != 10 {
		t.Fatalf("after the short take: budget %d, pool %d; want 2 and 10 (the credit and the first Load's)", b.used.Load(), p.InUse())
	}
	done := make(chan error)
	go func() { done <- ls.reserve(context.Background(), 4, "the shortfall", false) }()
	untilWaiting(t, p, 1)
	first.give(8)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := ls.take(6, "a long line"); err != nil {
		t.Fatalf("the same take with the shortfall reserved: %v", err)
	}
	ls.give(6)
	ls.end()
	if b.used.Load() != 0 || p.InUse() != 0 {
		t.Errorf("after the lease ended: budget %d, pool %d; want 0 and 0", b.used.Load(), p.InUse())
	}
	first.close()
}
