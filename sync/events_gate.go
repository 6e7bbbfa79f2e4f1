package sync

import (
	"time"

	"github.com/deltasync/deltasync/sync/location"
)

// This file is the seam between Events and the Reconciler: Reconcile calls
// enter, readLog calls logRead. With Options.Events nil both do nothing, so
// a daemon without events behaves exactly as before.

// enter serialises reconciles of one table (a cron cycle and an event may
// name it at once) and takes one of the reconcile slots shared by cron
// workers and event workers. It returns the release function.
func (e *Events) enter(t Target) func() {
	if e == nil {
		return func() {}
	}
	name := t.Name.String()
	e.mu.Lock()
	l := e.locks[name]
	if l == nil {
		l = make(chan struct{}, 1)
		e.locks[name] = l
	}
	et := e.table(name)
	et.target = t
	e.mu.Unlock()
	l <- struct{}{} // the table first, then a slot: no lock-order cycle
	e.slots <- struct{}{}
	return func() {
		<-e.slots
		<-l
	}
}

// table returns the table's entry, creating it. e.mu must be held.
func (e *Events) table(name string) *eventTable {
	et := e.tables[name]
	if et == nil {
		et = &eventTable{}
		e.tables[name] = et
	}
	return et
}

// logRead decides whether a read of the table's log at loc may reuse the
// previous snapshot without any storage request: only when reuse is
// possible at all, every subscription has been open since before the last
// full read, no event arrived for the table since that read started, and
// the read is younger than ResyncInterval. Otherwise it returns a function
// to call once the full read succeeded.
func (e *Events) logRead(name, loc string, reuse bool) (skip bool, fullRead func()) {
	if e == nil {
		return false, func() {}
	}
	now := e.opts.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	et := e.tables[name]
	if reuse && et != nil && e.allUp() && et.loc == loc && et.eventSeq <= et.readSeq &&
		!et.lastFull.Before(e.upSince) && now.Sub(et.lastFull) < e.opts.ResyncInterval && e.pending[name] == nil {
		e.opts.Metrics.skippedRead()
		return true, nil
	}
	e.seq++
	token := e.seq
	return false, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		et := e.table(name)
		if root := location.Canonical(loc); root != et.root {
			if et.root != "" {
				e.index.Remove(et.root, name)
			}
			e.index.Add(root, name)
			et.root = root
		}
		et.loc, et.lastFull = loc, now
		et.readSeq = max(et.readSeq, token)
	}
}

// allUp reports whether every subscription is open. e.mu must be held.
func (e *Events) allUp() bool {
	for _, s := range e.subs {
		if !s.up {
			return false
		}
	}
	return true
}

// mayReuse reports whether the table's previous snapshot could stand for
// its log at rec without reopening it: same location (openURL is rec's
// location as the storage policy resolved it), and for a managed table the
// catalog's ratified version is the snapshot's.
func (r *Reconciler) mayReuse(st *tableState, rec Record, openURL string, fresh bool) bool {
	if fresh || st.snap == nil || st.table == nil || st.url != openURL {
		return false
	}
	if r.opts.VendedCredentials && !r.opts.Now().Before(st.credsValid.Time()) {
		return false
	}
	if rec.Managed() {
		v := rec.Table.LatestTableVersion
		return v != nil && *v == st.snap.Version
	}
	return true
}

// knows reports whether the reconciler still tracks the table (it is
// selected and owned by this shard as of the last cycle).
func (r *Reconciler) knows(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tables[name]
	return ok
}

// nextAttempt is when a failing table may be reconciled again (zero: now).
func (r *Reconciler) nextAttempt(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.tables[name]; ok {
		return st.status.NextAttempt
	}
	return time.Time{}
}
