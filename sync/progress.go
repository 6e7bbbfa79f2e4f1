package sync

import (
	"fmt"
	"time"
)

// CycleProgress is what the running (or, when none runs, the last) cycle
// has done so far: what /readyz and the deltasync_cycle_* gauges show while
// a slow or stuck cycle is still going, before its report exists.
type CycleProgress struct {
	// Running is true from the start of Sync until it returns.
	Running bool
	// Cycle is the cycle's number (0: no cycle has started yet).
	Cycle int64
	// Started is when the cycle started; Finished when it ended (zero
	// while Running).
	Started, Finished time.Time
	// Listed counts the tables the cycle has listed and handed to its
	// workers so far (tables waiting out a backoff are not counted);
	// ListingDone says the listing has ended, so Listed is the total.
	Listed      int
	ListingDone bool
	// Done counts the tables the cycle has reconciled so far.
	Done int
}

// Age is how long the cycle has been running at now (or ran, once ended).
func (p CycleProgress) Age(now time.Time) time.Duration {
	if p.Cycle == 0 {
		return 0
	}
	if !p.Running {
		return p.Finished.Sub(p.Started)
	}
	return now.Sub(p.Started)
}

// String describes the progress in one line, e.g. "cycle 12 running for
// 41s: 4 of 12 tables reconciled" ("... (still listing)" while the total is
// not known yet) or "cycle 11 finished 20s ago after 3s:
// 12 of 12 tables reconciled".
func (p CycleProgress) String() string { return p.describe(time.Now()) }

func (p CycleProgress) describe(now time.Time) string {
	if p.Cycle == 0 {
		return "no cycle started yet"
	}
	tables := fmt.Sprintf("%d of %d tables reconciled", p.Done, p.Listed)
	if !p.ListingDone {
		tables += " (still listing)"
	}
	if p.Running {
		return fmt.Sprintf("cycle %d running for %s: %s", p.Cycle, p.Age(now).Round(100*time.Millisecond), tables)
	}
	return fmt.Sprintf("cycle %d finished %s ago after %s: %s", p.Cycle, now.Sub(p.Finished).Round(100*time.Millisecond),
		p.Age(now).Round(100*time.Millisecond), tables)
}

// Progress returns the running cycle's progress, or the last cycle's when
// none runs. It may be called at any time.
func (r *Reconciler) Progress() CycleProgress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress
}

// progressStart marks cycle as running from start.
func (r *Reconciler) progressStart(cycle int64, start time.Time) {
	r.mu.Lock()
	r.progress = CycleProgress{Running: true, Cycle: cycle, Started: start}
	r.mu.Unlock()
	r.opts.Metrics.CycleStarted(start)
}

// progressListed counts n tables handed to the workers (-1: one that was
// not handed after all).
func (r *Reconciler) progressListed(n int) {
	r.mu.Lock()
	r.progress.Listed += n
	r.mu.Unlock()
	r.opts.Metrics.CycleTablesListed(n)
}

// progressListingDone records that the listing has ended.
func (r *Reconciler) progressListingDone() {
	r.mu.Lock()
	r.progress.ListingDone = true
	r.mu.Unlock()
}

// progressDone counts one table reconciled.
func (r *Reconciler) progressDone() {
	r.mu.Lock()
	r.progress.Done++
	r.mu.Unlock()
	r.opts.Metrics.CycleTableDone()
}

// progressEnd marks the cycle as ended at end.
func (r *Reconciler) progressEnd(end time.Time) {
	r.mu.Lock()
	r.progress.Running, r.progress.Finished = false, end
	r.mu.Unlock()
	r.opts.Metrics.CycleEnded()
}
