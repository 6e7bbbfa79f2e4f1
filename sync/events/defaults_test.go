package events

import (
	"context"
	"testing"

	"github.com/deltasync/deltasync/sync"
	"gocloud.dev/pubsub"
)

// TestDefaultConcurrencyIsTheReconcilersReads: the slots events and cron
// cycles share are the reconciler's full reads, so a caller that leaves
// Concurrency unset gets read_concurrency's default, not fewer.
func TestDefaultConcurrencyIsTheReconcilersReads(t *testing.T) {
	e, err := New(Options{Sources: []Source{{Name: "q", Open: func(context.Context) (*pubsub.Subscription, func(), error) { return nil, nil, nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.opts.Concurrency, sync.ResolveReadConcurrency(0, 0); got != want {
		t.Errorf("default Concurrency = %d, want the reconciler's default full reads, %d", got, want)
	}
}
