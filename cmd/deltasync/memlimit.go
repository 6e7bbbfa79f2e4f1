package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// The Go GC lets the heap grow to about twice the live heap (GOGC=100)
// before it collects, so without a limit a daemon's peak RSS is about twice
// what it keeps, plus the garbage of its busiest cycle. A container that
// is killed at its memory limit wants the GC to work harder near that
// limit instead: the daemon sets the runtime's soft memory limit to
// memoryLimitShare of the container's limit (cgroup v2 memory.max, or v1
// memory.limit_in_bytes) unless GOMEMLIMIT is set. The rest is headroom
// for what the Go runtime does not count (thread stacks outside the heap,
// cgo, page-cache accounting).
const memoryLimitShare = 0.9

// cgroupRoot is where the container's own cgroup is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupMemoryLimit reads the memory limit of the cgroup mounted at root
// (v2 first, then v1). ok is false when there is none ("max", absent, or
// v1's "unlimited" page-rounded MaxInt64).
func cgroupMemoryLimit(root string) (limit int64, ok bool) {
	for _, f := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= math.MaxInt64/2 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// applyMemoryLimit sets the soft memory limit from the container's limit
// (see memoryLimitShare) unless GOMEMLIMIT is set, and logs what it did.
// It returns the limit set (0: none).
func applyMemoryLimit(log *zap.Logger, root string) int64 {
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		log.Info("soft memory limit from GOMEMLIMIT", zap.String("GOMEMLIMIT", v))
		return 0
	}
	limit, ok := cgroupMemoryLimit(root)
	if !ok {
		return 0
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	log.Info("soft memory limit set from the container's memory limit",
		zap.Int64("container_limit_bytes", limit), zap.Int64("soft_limit_bytes", soft))
	return soft
}

// releaseMemory returns what a daemon's cycle freed to the operating system
// as the cycle ends (a collection, then every free page released; ~0.1-0.3 s
// at 50,000 tables). A daemon idles between cycles: without it, it keeps
// the heap its busiest cycle grew to, and the next cycle's garbage fills
// the collector's goal set by the previous one before the first collection
// shrinks it. A process-wide side effect, so it is the daemon's to call,
// not the library's.
func releaseMemory() { debug.FreeOSMemory() }

// defaultMaxReadMiB is storage.max_read_mib's default where the container's
// memory limit does not call for less: 4 full reads at the default
// storage.max_load_mib.
const defaultMaxReadMiB = 1024

// maxReadBytes is the limit of the memory pool all log reads share:
// storage.max_read_mib when set (configuredMiB > 0), else
// defaultMaxReadMiB, or half the container's memory limit when that is
// known (known) and less, but never below one read's budget
// (storage.max_load_mib, loadMiB). Half: the rest of the daemon (its
// tables' state, the catalog's answers, the GC's headroom) needs room too.
func maxReadBytes(configuredMiB, loadMiB, containerLimit int64, known bool) int64 {
	if configuredMiB > 0 {
		return configuredMiB << 20
	}
	n := int64(defaultMaxReadMiB) << 20
	if known {
		n = min(n, containerLimit/2)
	}
	return max(n, loadMiB<<20)
}
