package sync_test

import (
	"context"
	"runtime/metrics"
	"testing"

	"github.com/deltasync/deltasync/sync"
)

// TestReleaseMemoryAfterCycle: with Options.ReleaseMemory (what deltasync
// run sets) a cycle ends with a forced collection that returns free pages
// to the OS; without it, none. Counted with the runtime's forced-GC
// counter (the test is not parallel, so nothing else forces one).
func TestReleaseMemoryAfterCycle(t *testing.T) {
	e := newEnv(t)
	e.register("basic_partitioned", "a", -1)
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	for _, release := range []bool{false, true} {
		rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}}, func(o *sync.Options) {
			o.ReleaseMemory = release
		})
		before := forced()
		rep := rec.Sync(context.Background())
		got := forced() - before
		if rep.Failed() {
			t.Fatalf("release %v: %s", release, rep.Summary())
		}
		if release && got != 1 || !release && got != 0 {
			t.Errorf("ReleaseMemory %v: %d forced collections in a cycle", release, got)
		}
		_ = rec.Close()
	}
}
