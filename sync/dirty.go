package sync

import (
	stdsync "sync"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/location"
)

// Dirty is the seam between a source of work (package sync/events) and the
// Reconciler, owned by the reconciler's side: the set of tables whose logs
// may have changed since their last full read. The source fills it (Mark,
// Settle, SourceUp) and finds tables by their log's root (Lookup); the
// reconciler consults it before reading a log, and a cron cycle skips the
// storage LIST of a table nothing marked since its last full read. The
// Reconciler never calls the source; the source reconciles through the
// Reconciler's exported methods (Reconcile, Tracked) only.
//
// Dirty also serialises reconciles of one table (a cron cycle and an event
// may name it at once) and bounds the reconciles run by cron cycles and by
// the source together. A Reconciler without one (Options.Dirty nil) reads
// every log every cycle and takes no slot.
type Dirty struct {
	opts  DirtyOptions
	slots chan struct{} // reconcile slots shared by cron and the source

	mu       stdsync.Mutex
	attached bool
	seq      uint64 // increases with every mark and every read start
	index    location.Index
	tables   map[string]*dirtyTable
	sources  map[string]bool // subscription name → open
	upSince  time.Time       // when every source was last (re)opened
	locks    map[string]chan struct{}
}

// DirtyOptions configures a Dirty.
type DirtyOptions struct {
	// Concurrency bounds the reconciles run by the source and by cron
	// cycles together (default 4).
	Concurrency int
	// ResyncInterval is the longest a cron cycle may go without reading a
	// table's log in full. 0: cycles never skip a read.
	ResyncInterval time.Duration
	// Skipped, when set, is called for every log read skipped.
	Skipped func()
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// dirtyTable is what Dirty knows about one table's log reads.
type dirtyTable struct {
	target   Target // as the last reconcile was given it
	loc      string // location of the last full read
	root     string // its canonical form, in index
	lastFull time.Time
	readSeq  uint64 // seq when the last full read started
	eventSeq uint64 // seq of the last mark for the table
	pending  bool   // the source holds events the reconciler has not seen
}

// NewDirty returns an empty Dirty.
func NewDirty(opts DirtyOptions) *Dirty {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Dirty{
		opts: opts, slots: make(chan struct{}, opts.Concurrency),
		index: location.Index{}, tables: map[string]*dirtyTable{},
		sources: map[string]bool{}, locks: map[string]chan struct{}{},
	}
}

// Attached reports whether a Reconciler was created with this Dirty in
// Options.Dirty (without one, nothing ever fills the index Lookup reads).
func (d *Dirty) Attached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.attached
}

// SourceUp records whether the named source (a subscription) is open.
// Every source named must be open for a read to be skipped; one coming
// back may have missed changes, so no read from before it may be trusted.
func (d *Dirty) SourceUp(name string, up bool) {
	now := d.opts.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if up && !d.sources[name] {
		d.upSince = now
	}
	d.sources[name] = up
}

// Mark records that the table's log changed: its next read is a full one,
// and no read is skipped while the source holds the change (until Settle).
func (d *Dirty) Mark(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	if dt := d.tables[name]; dt != nil {
		dt.eventSeq = d.seq
	}
	d.table(name).pending = true
}

// Settle records that the source is done with the table's changes: seen
// is false when no reconcile saw them (the next cycle must read the log in
// full), more is true when newer changes are still held.
func (d *Dirty) Settle(name string, seen, more bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !seen {
		d.seq++
		if dt := d.tables[name]; dt != nil {
			dt.eventSeq = d.seq
		}
	}
	if dt := d.tables[name]; dt != nil {
		dt.pending = more
	}
}

// Lookup returns the tables whose log was last fully read under root, a
// canonical location (location.Canonical or location.ObjectRoot).
func (d *Dirty) Lookup(root string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.index.Lookup(root)...)
}

// Target returns the table as its last reconcile was given it (name, mode
// and listing); ok is false for a table never reconciled.
func (d *Dirty) Target(name string) (t Target, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dt := d.tables[name]; dt != nil && dt.target.Name != (catalog.TableName{}) {
		return dt.target, true
	}
	return Target{}, false
}

// attach marks d as consulted by a Reconciler.
func (d *Dirty) attach() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.attached = true
	d.mu.Unlock()
}

// enter serialises reconciles of one table and takes one of the reconcile
// slots. It returns the release function.
func (d *Dirty) enter(t Target) func() {
	if d == nil {
		return func() {}
	}
	release := d.enterTable(t) // the table first, then a slot: no lock-order cycle
	d.slots <- struct{}{}
	return func() {
		<-d.slots
		release()
	}
}

// enterTable serialises reconciles of one table without taking a
// reconcile slot (a cycle's cheap check). It returns the release function.
func (d *Dirty) enterTable(t Target) func() {
	if d == nil {
		return func() {}
	}
	name := t.Name.String()
	d.mu.Lock()
	l := d.locks[name]
	if l == nil {
		l = make(chan struct{}, 1)
		d.locks[name] = l
	}
	// Not the record the listing read (a Hive Metastore's,
	// Listed.Answer): it is the cycle's, stale by the time an event
	// reconciles the table (the cycle may have written since), and an
	// event's reconcile reads the record afresh.
	kept := t
	if kept.Listed != nil {
		l := *kept.Listed
		l.Answer = nil
		kept.Listed = &l
	}
	d.table(name).target = kept
	d.mu.Unlock()
	l <- struct{}{}
	return func() { <-l }
}

// table returns the table's entry, creating it. d.mu must be held.
func (d *Dirty) table(name string) *dirtyTable {
	dt := d.tables[name]
	if dt == nil {
		dt = &dirtyTable{}
		d.tables[name] = dt
	}
	return dt
}

// logRead decides whether a read of the table's log at loc may reuse the
// previous snapshot without any storage request: only when reuse is
// possible at all, every source has been open since before the last full
// read, nothing marked the table since that read started nor holds a mark,
// and the read is younger than ResyncInterval. Otherwise it returns a
// function to call once the full read succeeded.
func (d *Dirty) logRead(name, loc string, reuse bool) (skip bool, fullRead func()) {
	if d == nil {
		return false, func() {}
	}
	now := d.opts.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	dt := d.tables[name]
	if reuse && dt != nil && d.allUp() && dt.loc == loc && dt.eventSeq <= dt.readSeq &&
		!dt.lastFull.Before(d.upSince) && now.Sub(dt.lastFull) < d.opts.ResyncInterval && !dt.pending {
		if d.opts.Skipped != nil {
			d.opts.Skipped()
		}
		return true, nil
	}
	d.seq++
	token := d.seq
	return false, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		dt := d.table(name)
		if root := location.Canonical(loc); root != dt.root {
			if dt.root != "" {
				d.index.Remove(dt.root, name)
			}
			d.index.Add(root, name)
			dt.root = root
		}
		dt.loc, dt.lastFull = loc, now
		dt.readSeq = max(dt.readSeq, token)
	}
}

// allUp reports whether every source is open (and there is one). d.mu
// must be held.
func (d *Dirty) allUp() bool {
	for _, up := range d.sources {
		if !up {
			return false
		}
	}
	return len(d.sources) > 0
}

// track makes a table just registered at loc known to the source of work
// before any reconcile has read its log: Lookup finds it by its root and
// Target returns t. Nothing about its log is recorded, so no read of it
// is skipped.
func (d *Dirty) track(t Target, loc string) {
	if d == nil {
		return
	}
	name := t.Name.String()
	d.mu.Lock()
	defer d.mu.Unlock()
	dt := d.table(name)
	dt.target = t
	if root := location.Canonical(loc); root != dt.root {
		if dt.root != "" {
			d.index.Remove(dt.root, name)
		}
		d.index.Add(root, name)
		dt.root = root
	}
}
