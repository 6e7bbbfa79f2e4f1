package notify_test

import (
	"context"
	"testing"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/notify"
)

// discard is a sink that takes every event at once.
type discard struct{}

func (discard) Name() string                                { return "discard" }
func (discard) Deliver(context.Context, notify.Event) error { return nil }

// BenchmarkNotify is what telling the Dispatcher one outcome costs the
// reconcile: an unchanged table (no event), and a synced schema change
// (event built, queued for two sinks).
func BenchmarkNotify(b *testing.B) {
	d := notify.New(notify.Options{QueueSize: 1 << 20}, discard{}, discard{})
	defer func() { _ = d.Close(context.Background()) }()
	b.Run("unchanged", func(b *testing.B) {
		n := sync.Notice{Result: sync.Result{Table: "main.s.t", Outcome: sync.OutcomeUnchanged}}
		b.ReportAllocs()
		for b.Loop() {
			d.Notify(n)
		}
	})
	b.Run("synced", func(b *testing.B) {
		n := schemaNotice()
		v := int64(0)
		b.ReportAllocs()
		for b.Loop() {
			v++
			n.Result.LogVersion = &v // a new outcome each time: never suppressed
			d.Notify(n)
		}
	})
}
