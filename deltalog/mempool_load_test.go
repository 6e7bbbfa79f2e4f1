package deltalog

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// memCorpusTable copies a corpus table into a memory bucket, with edit (if
// not nil) changing its files first.
func memCorpusTable(t *testing.T, name string, edit func(files map[string][]byte)) *blob.Bucket {
	t.Helper()
	files := tableFiles(t, filepath.Join(testcorpus.Dir(t), name))
	if edit != nil {
		edit(files)
	}
	mb := memblob.OpenBucket(nil)
	t.Cleanup(func() { mb.Close() })
	for k, data := range files {
		if err := mb.WriteAll(context.Background(), k, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	return mb
}

// holdPool makes a claim that is admitted first and holds n bytes of p: the
// oldest Load, which every other waits behind until release.
func holdPool(t *testing.T, p *MemoryPool, n int64) (release func()) {
	t.Helper()
	c := p.claim(context.Background())
	if err := c.wait(n); err != nil {
		t.Fatal(err)
	}
	return c.close
}

// TestConcurrentLoadsShareMemoryPool: 16 Loads of a checkpointed corpus
// table (each holding ~190 KB at its peak) under a pool of 256 KiB, less
// than a fifth of what they would hold at once, all start together
// (each waits behind a claim holding the whole pool until all do) and all
// succeed: running out of pool delays tables, never fails them. The pool's
// peak stays within its limit plus one Load's budget, and it is back at 0.
func TestConcurrentLoadsShareMemoryPool(t *testing.T) {
	const (
		loads     = 16
		poolLimit = 256 << 10
		perLoad   = 512 << 10
	)
	p := NewMemoryPool(poolLimit)
	release := holdPool(t, p, poolLimit)
	var wg stdsync.WaitGroup
	errs := make([]error, loads)
	versions := make([]int64, loads)
	for i := range loads {
		tbl := openCorpusTable(t, "checkpoint", WithMemoryPool(p), WithMaxLoadBytes(perLoad))
		wg.Go(func() {
			snap, err := tbl.Load(context.Background(), LoadOptions{})
			if err != nil {
				errs[i] = err
				return
			}
			versions[i] = snap.Version
		})
	}
	untilWaiting(t, p, loads)
	release()
	wg.Wait()
	for i := range loads {
		if errs[i] != nil || versions[i] != 14 {
			t.Errorf("Load %d: version %d, %v; want 14", i, versions[i], errs[i])
		}
	}
	if peak := p.Peak(); peak > poolLimit+perLoad {
		t.Errorf("peak in use %d, over the pool's limit %d + one Load's budget %d", peak, poolLimit, perLoad)
	}
	if got := p.InUse(); got != 0 {
		t.Errorf("in use after every Load ended: %d, want 0", got)
	}
	if p.WaitTime() <= 0 {
		t.Error("no wait counted, though every Load waited")
	}
}

// TestMemoryPoolReleasedOnEveryLoadExit: whatever way a Load or Refresh
// ends (success, a corrupt checkpoint, its own budget exceeded, cancelled
// while waiting for the pool), the pool is back at 0 afterwards.
func TestMemoryPoolReleasedOnEveryLoadExit(t *testing.T) {
	ctx := context.Background()
	const cp = "_delta_log/00000000000000000010.checkpoint.parquet"
	corrupt := func(files map[string][]byte) {
		data := append([]byte(nil), files[cp]...)
		for i := 4; i < len(data)-200; i++ {
			data[i] = 0xff // pages garbled, footer intact
		}
		files[cp] = data
	}
	check := func(t *testing.T, p *MemoryPool) {
		t.Helper()
		if p.Peak() == 0 {
			t.Error("the read took nothing from the pool")
		}
		if got := p.InUse(); got != 0 {
			t.Errorf("in use after the read ended: %d, want 0", got)
		}
	}
	t.Run("success", func(t *testing.T) {
		p := NewMemoryPool(1 << 20)
		if _, err := openCorpusTable(t, "checkpoint", WithMemoryPool(p)).Load(ctx, LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		check(t, p)
	})
	t.Run("corrupt checkpoint", func(t *testing.T) {
		p := NewMemoryPool(1 << 20)
		_, err := NewTable(memCorpusTable(t, "checkpoint", corrupt), "t", WithMemoryPool(p)).Load(ctx, LoadOptions{})
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Load of a garbled checkpoint: %v, want ErrCorrupt", err)
		}
		check(t, p)
	})
	t.Run("budget exceeded", func(t *testing.T) {
		p := NewMemoryPool(1 << 20)
		_, err := openCorpusTable(t, "checkpoint", WithMemoryPool(p), WithMaxLoadBytes(100<<10)).Load(ctx, LoadOptions{})
		if !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("Load over its own budget: %v, want ErrBudgetExceeded", err)
		}
		check(t, p)
	})
	t.Run("refresh", func(t *testing.T) {
		mb := memblob.OpenBucket(nil)
		defer mb.Close()
		put := func(key string, data []byte) {
			if err := mb.WriteAll(ctx, "_delta_log/"+key, data, nil); err != nil {
				t.Fatal(err)
			}
		}
		put("00000000000000000000.json", budgetCommit("1700000000000", true, 10))
		p := NewMemoryPool(1 << 20)
		tbl := NewTable(mb, "t", WithMemoryPool(p), WithMaxLoadBytes(1<<20))
		prev, err := tbl.Load(ctx, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		put("00000000000000000001.json", budgetCommit("1700000001000", false, 10))
		if prev, _, err = tbl.Refresh(ctx, prev, LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		check(t, p)
		put("00000000000000000002.json", budgetCommit("1700000002000", false, 3<<20))
		if _, _, err := tbl.Refresh(ctx, prev, LoadOptions{}); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("Refresh over its budget: %v, want ErrBudgetExceeded", err)
		}
		check(t, p)
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		p := NewMemoryPool(1 << 20)
		release := holdPool(t, p, 1<<20)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() {
			_, err := openCorpusTable(t, "checkpoint", WithMemoryPool(p)).Load(cctx, LoadOptions{})
			done <- err
		}()
		untilWaiting(t, p, 1)
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checkpoint") {
			t.Errorf("Load cancelled while waiting for the pool: %v; want context.Canceled naming the table, not ErrCorrupt", err)
		}
		if got := p.InUse(); got != 1<<20 {
			t.Errorf("in use with the Load ended: %d, want the holder's %d", got, 1<<20)
		}
		release()
		check(t, p)
	})
}

// TestLoadWaitsForPoolOutsideRequestSlot: a Load waiting for the pool holds
// no storage request slot, both when the commit's listed size is reserved
// before its GET and when a streamed commit's long line needs more than
// that while the GET is open (the GET is given up, the shortfall reserved,
// the GET sent again). A slot held while waiting could be the one the
// oldest Load needs: with the process limited to one request in flight,
// the test takes the slot itself while the Load waits.
func TestLoadWaitsForPoolOutsideRequestSlot(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		desc  int   // metaData description bytes
		held  int64 // of the pool's 4 MiB, by the oldest claim
		wantG int   // GETs of the commit at least
	}{
		{"reserved before the GET", 10, 4 << 20, 1},
		{"long line while streaming", 3 << 20, 4<<20 - 512<<10, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			mb := memblob.OpenBucket(nil)
			defer mb.Close()
			if err := mb.WriteAll(ctx, "_delta_log/00000000000000000000.json", budgetCommit("1700000000000", true, c.desc), nil); err != nil {
				t.Fatal(err)
			}
			gates, err := NewStorageGates(StorageLimits{MaxInFlight: 1})
			if err != nil {
				t.Fatal(err)
			}
			p := NewMemoryPool(4 << 20)
			release := holdPool(t, p, c.held)
			var mu stdsync.Mutex
			gets := 0
			tbl := NewTable(mb, "t", WithMemoryPool(p), WithMaxLoadBytes(16<<20), WithObserver(func(op string, _ time.Duration, _ error) {
				mu.Lock()
				defer mu.Unlock()
				if op == "get" {
					gets++
				}
			}))
			tbl.gate = gates.gate("mem://t")
			done := make(chan error)
			go func() {
				_, err := tbl.Load(ctx, LoadOptions{})
				done <- err
			}()
			untilWaiting(t, p, 1)
			select {
			case gates.process <- struct{}{}:
				<-gates.process
			default:
				t.Error("the Load holds the request slot while it waits for the pool")
			}
			release()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if gets < c.wantG {
				t.Errorf("%d GETs, want at least %d", gets, c.wantG)
			}
			if got := p.InUse(); got != 0 {
				t.Errorf("in use after the Load: %d, want 0", got)
			}
		})
	}
}
