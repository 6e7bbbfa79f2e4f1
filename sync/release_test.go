package sync_test

import (
	"context"
	"runtime/metrics"
	"testing"

	"github.com/deltasync/deltasync/sync"
)

// TestCycleForcesNoCollection: a library leaves process-wide side effects
// to its caller. A cycle forces no garbage collection (the daemon returns
// memory to the OS itself, between cycles: cmd/deltasync releaseMemory).
// Counted with the runtime's forced-GC counter (the test is not parallel,
// so nothing else forces one).
func TestCycleForcesNoCollection(t *testing.T) {
	e := newEnv(t)
	e.register("basic_partitioned", "a", -1)
	rec := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".*.*"}}})
	defer rec.Close()
	before := forcedCollections()
	rep := rec.Sync(context.Background())
	got := forcedCollections() - before
	if rep.Failed() {
		t.Fatal(rep.Summary())
	}
	if got != 0 {
		t.Errorf("%d forced collections in a cycle, want 0", got)
	}
}

func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
