package sync

import (
	"context"
	"time"
)

// DefaultShutdownDrain bounds how long a table in flight may keep running
// once the daemon is told to stop. With Kubernetes' default 30 s grace
// period it leaves time for the HTTP server to shut down.
const DefaultShutdownDrain = 20 * time.Second

// tableContext returns the context one table's reconcile runs in. It is not
// cancelled with parent, so a table in flight finishes (a half-done
// reconcile is harmless but wasteful), yet it is bounded: by timeout, and,
// once parent is cancelled (shutdown), by drain more. Without that bound a
// catalog that stops answering keeps a stopping daemon alive through every
// retry of every request (attempts × per-attempt timeout), past any grace
// period, and it is killed anyway. A deadline on parent (plan --timeout)
// still applies when it is sooner than timeout.
func tableContext(parent context.Context, timeout, drain time.Duration) (context.Context, context.CancelFunc) {
	if d, ok := parent.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), timeout)
	stop := context.AfterFunc(parent, func() {
		t := time.NewTimer(drain)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			cancel()
		}
	})
	return ctx, func() {
		stop()
		cancel()
	}
}
