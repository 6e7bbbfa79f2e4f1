//go:build unix

package deltalog

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time used by this process so far.
// Benchmarks report CPU per op next to wall time because wall time on a
// shared 2-core machine mostly measures the neighbours.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
