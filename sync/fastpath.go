package sync

import (
	"context"
	"hash/fnv"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
)

// verified is what a table looked like the last time a full reconcile found
// its catalog record in sync with its log. A later cycle whose listing shows
// the same record (same updated_at, table id and location) and whose log
// LIST shows no newer version has nothing to compare: the table is
// unchanged without any per-table catalog request.
//
// The catalog advances a table's updated_at (and with it the etag) on every
// metadata change (uc-delta-api.md §4.4), so an edit made only in the
// catalog shows in the next listing. Until is when the table must be fully
// re-read anyway (Options.ResyncInterval), so nothing hides behind this.
type verified struct {
	until     compactTime // zero: not verified
	updatedAt int64       // the listing's updated_at the verdict holds for
	tableID   string      // the listing's table_id
	listedLoc string      // the listing's storage_location, as spelled
	version   int64       // log version found in sync
	mode      Mode
	typ       string
	// flagged is the result of a full reconcile that flagged the table
	// (drift a warn-mode rule leaves, a location that differs, ...) from
	// nothing but the two sides it read: while the listing and the log
	// stay as they were, the next cycles report it again, flagged as
	// before, without reading the record. Nil for a table found in sync.
	flagged *Result
}

// compactTime is a point in time kept in 8 bytes (Unix nanoseconds, 0 for the
// zero time) where a field of every table's state would take time.Time's 24.
type compactTime int64

func compactTimeOf(t time.Time) compactTime {
	if t.IsZero() {
		return 0
	}
	return compactTime(t.UnixNano())
}

// Time returns m as a time.Time (the zero time for 0).
func (m compactTime) Time() time.Time {
	if m == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(m))
}

// IsZero reports whether m is the zero time.
func (m compactTime) IsZero() bool { return m == 0 }

// fastPath is the fast path of Reconcile: it confirms an EXTERNAL table
// that was verified in sync, or flagged for what its two sides hold, and
// whose listed record did not change, with one LIST of its log; a table
// whose listed location the storage policy refuses is refused from the
// listing (listedRefusal). ok is false when the full reconcile must run.
func (r *Reconciler) fastPath(ctx context.Context, st *tableState, t Target) (Result, bool) {
	v := &st.verified
	l := t.Listed
	if l == nil || l.UpdatedAt == 0 || v.until.IsZero() || !r.opts.Now().Before(v.until.Time()) ||
		l.UpdatedAt != v.updatedAt || l.ID != v.tableID || l.Location != v.listedLoc ||
		t.Mode != v.mode || st.table == nil || st.snap == nil || st.snap.Version != v.version {
		// Only a table not verified at this listed location is checked
		// against the policy here: a verified one was read there under
		// the same policy, and its check costs no parse.
		res, ok := r.listedRefusal(t)
		if ok {
			st.verified = verified{}
		}
		return res, ok
	}
	if r.credsExpired(&st.tableLog) {
		return Result{}, false // the full path vends new credentials
	}
	// With events, a table no notification named since its last read is
	// confirmed without even the LIST.
	skip, fullRead := r.opts.Dirty.logRead(t.Name.String(), st.loc, true)
	if !skip {
		snap, how, err := st.table.Refresh(ctx, st.snap, deltalog.LoadOptions{})
		if err != nil || how != deltalog.Unchanged {
			// A rebuilt log is not kept: the full reconcile reads it
			// again from the snapshot the catalog was verified with,
			// whose metaData.id tells a recreated table (recreated.go).
			if err == nil && how == deltalog.Advanced {
				// Kept whole until the full reconcile that follows: its
				// refresh finds nothing new (one more LIST, no GET) and it
				// diffs with a new metaData's schema string, not a digest,
				// before it compacts the snapshot.
				st.snap = snap
			}
			return Result{}, false
		}
		fullRead()
	}
	if ce := r.log.Check(zap.DebugLevel, "unchanged since the last full verification"); ce != nil {
		ce.Write(zap.String("table", t.Name.String()), zap.Int64("version", v.version),
			zap.Int64("updated_at", v.updatedAt), zap.Time("resync", v.until.Time()))
	}
	if v.flagged != nil {
		return *v.flagged, true // the same result as the full reconcile that flagged it
	}
	version := v.version
	return Result{Table: t.Name.String(), Type: v.typ, Mode: t.Mode, Outcome: OutcomeUnchanged, Status: StatusSynced,
		LogVersion: &version, CatalogVersion: &version, Attempts: 1}, true
}

// remember records a full reconcile's verdict: an EXTERNAL table found (or
// made) in sync is remembered with the listing it was checked against, and
// so is one flagged (or left as it is) for what its record and log hold,
// with its result (recs.repeatable); anything else forgets. recs.before is
// the record read at the start of the reconcile, recs.after the one that
// confirmed it (the same unless an update was sent).
func (r *Reconciler) remember(st *tableState, t Target, res *Result, recs records) {
	first := st.verified.until.IsZero()
	st.verified = verified{}
	// A synced table still OutOfSync (UniForm drift the catalog cannot
	// take) is not in sync: it is kept only as a repeatable flag, with
	// the result that reports its drift.
	inSync := res.Status == StatusSynced && (res.Outcome == OutcomeSynced || res.Outcome == OutcomeUnchanged && res.Plan == nil)
	var flagged *Result
	if !inSync {
		// A flag that depends on nothing but the record and the log
		// read (decide's repeatable verdicts: no held update, no
		// time-dependent watermark hold, no dry run) holds for as long
		// as both stay as they were. A catalog-managed record is not
		// kept: its ratified commits do not advance updated_at.
		if !recs.repeatable || recs.before == nil || recs.before.Managed() {
			return
		}
		kept := *res
		flagged = &kept
	}
	after := recs.after
	if flagged != nil {
		after = recs.before // nothing was sent
	}
	if r.opts.ResyncInterval <= 0 || t.Listed == nil || t.Listed.UpdatedAt == 0 ||
		res.LogVersion == nil || after == nil || after.Managed() || st.snap == nil || st.snap.Version != *res.LogVersion {
		return
	}
	// The listing came first, so any change after it advances updated_at
	// past the listed value. Our own update advanced it too: when this
	// server's Delta updated-time is the listing's clock (the record read
	// before the update showed the listed value), the value after the
	// update is what the next listing will show.
	updatedAt := t.Listed.UpdatedAt
	if res.Outcome == OutcomeSynced && recs.before.UpdatedTime == t.Listed.UpdatedAt {
		updatedAt = after.UpdatedTime
	}
	resync := r.opts.ResyncInterval
	if first {
		resync = r.firstResync(t.Name)
	}
	// Kept for every table between cycles: the listed location is mostly
	// the catalog's location the state already holds.
	listedLoc := reuseIfSame(st.loc, t.Listed.Location)
	st.verified = verified{
		until:     compactTimeOf(r.opts.Now().Add(resync)),
		updatedAt: updatedAt, tableID: t.Listed.ID, listedLoc: listedLoc,
		version: *res.LogVersion, mode: t.Mode, typ: tableType(res.Type),
		flagged: flagged,
	}
}

// tableType returns the constant spelling of the usual table types, so that
// what is kept per table does not hold a copy of the word decoded from
// every answer.
func tableType(s string) string {
	switch s {
	case catalog.TableTypeExternal:
		return catalog.TableTypeExternal
	case catalog.TableTypeManaged:
		return catalog.TableTypeManaged
	}
	return s
}

// firstResync is when a table verified for the first time (or again after
// a failure) is first re-read: at a point of ResyncInterval fixed by its
// name, so that the full re-reads of a fleet verified in one cycle are
// spread evenly over every cycle of the interval instead of all coming due
// together; later ones follow a whole ResyncInterval after each other.
func (r *Reconciler) firstResync(name catalog.TableName) time.Duration {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name.String()))
	d := r.opts.ResyncInterval
	return time.Duration(float64(d) * (float64(h.Sum32()) + 1) / (1 << 32))
}
