package main

import (
	"fmt"
	"testing"

	"github.com/deltasync/deltasync/sync"
)

// TestEventsShareTheReconcilersReadSlots: the events' reconciles are
// sized with the full-read slots the reconciler really has, for
// read_concurrency unset (the default), below concurrency (raised to it)
// and above it (kept), each compared with the reconciler the app builds
// from the same settings.
func TestEventsShareTheReconcilersReadSlots(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("checkpoint", "a")
	for _, tt := range []struct {
		concurrency, read, want int
	}{
		{4, 0, sync.DefaultReadConcurrency},
		{8, 2, 8},
		{8, 64, 64},
	} {
		t.Run(fmt.Sprintf("concurrency %d, read_concurrency %d", tt.concurrency, tt.read), func(t *testing.T) {
			a := testPlanApp(t, tc, func(cfg *config) { cfg.Concurrency, cfg.ReadConcurrency = tt.concurrency, tt.read })
			if got := a.rec.ReadConcurrency(); got != tt.want {
				t.Errorf("reconciler reads %d tables at once, want %d", got, tt.want)
			}
			if got := a.s.events.Concurrency; got != a.rec.ReadConcurrency() {
				t.Errorf("events run %d reconciles at once, the reconciler has %d full-read slots", got, a.rec.ReadConcurrency())
			}
		})
	}
}
