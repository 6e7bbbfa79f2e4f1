package deltalog

import (
	"math/bits"
	stdsync "sync"
)

// The buffers a Load reads log files into (JSON commits, checkpoint
// blocks) are garbage as soon as the file is parsed: nothing parsed keeps a
// reference into a file's bytes. A daemon loading thousands of tables per
// cycle allocated them anew for every table, and while the collector marks,
// everything allocated counts as live, so they also raised the heap goal.
// Buffers are kept in size classes of powers of two so that a buffer taken
// for n bytes always has room for n.
const (
	minPooledClass = 12 // 4 KiB: smaller buffers are cheap to allocate
	maxPooledClass = 20 // 1 MiB: checkpointWholeSize, the largest block
)

var bufPools [maxPooledClass + 1]stdsync.Pool // of *[]byte

// getBuf returns an empty buffer with capacity at least n, from the pool
// when one of its class is free. Below 4 KiB it allocates exactly n, so a
// caller that keeps a small file's bytes does not keep a page with them.
func getBuf(n int) []byte {
	if n < 1<<minPooledClass || n > 1<<maxPooledClass {
		return make([]byte, 0, max(n, 0))
	}
	c := bits.Len(uint(n - 1))
	if p, _ := bufPools[c].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<c)
}

// putBuf returns b to the pool. The caller must not use b afterwards, and
// nothing may still refer to its bytes.
func putBuf(b []byte) {
	c := bits.Len(uint(cap(b))) - 1 // the largest class b has room for
	if c < minPooledClass || c > maxPooledClass {
		return
	}
	b = b[:0]
	bufPools[c].Put(&b)
}
