package sync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/plan"
)

// This file resolves a write whose answer was lost — a timeout, a cut
// connection, a 5xx, a 409 to the resend of one of those — by reading the
// record again, so that the audit trail says what became of it: synced
// (the record holds the write; etag_after is its etag), not_applied (it
// does not), or unknown (the read failed too; the next reconcile of the
// table resolves it with a record that says so). It is the same for every
// kind of catalog: what a kind reads is a plan.Record.

// resolveTimeout bounds the read that resolves a lost answer; it runs
// detached from the write's context, which may be what expired.
const resolveTimeout = 30 * time.Second

// lostWrite is what a write whose answer was lost is checked against.
type lostWrite struct {
	// tableID and etagBefore are the uuid and etag the write was guarded
	// by ("" when it asserted none).
	tableID, etagBefore string
	// written is the etag the write set itself (HMS's guard value
	// transient_lastDdlTime on HMS 4), "" when the server picks it.
	written string
	// etagMoves is set when every write moves the record's etag (Unity
	// Catalog); HMS's one-second transient_lastDdlTime may not move.
	etagMoves bool
	// edit is what the write changed (nil: nothing to check, a create).
	edit *catalog.Edit
}

// resolution is what a lost answer was found to be: outcome synced (with
// the record's etag), not_applied or unknown, and how it was learned.
type resolution struct {
	outcome   audit.Outcome
	etagAfter string
	why       string
}

// unsure reports whether err leaves a write's outcome unknown until the
// record is read again: anything but a refusal the catalog answered to the
// write itself (a moved etag or uuid, a gone table, a value it will not
// store, a pre-flight refusal).
func unsure(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, catalog.ErrOutcomeUnknown) {
		return true
	}
	return !refusedAsSent(err)
}

// refusedAsSent reports whether err is the catalog's own refusal of the
// write as sent: the record did not change.
func refusedAsSent(err error) bool {
	return errors.Is(err, catalog.ErrConflict) || errors.Is(err, catalog.ErrNotFound) ||
		errors.Is(err, catalog.ErrRefused) || errors.Is(err, catalog.ErrUnsupported)
}

// resolve says what became of w from the record read again (rec), or from
// the error reading it (readErr).
func (w *lostWrite) resolve(rec *plan.Record, readErr error) resolution {
	switch {
	case readErr != nil && errors.Is(readErr, catalog.ErrNotFound):
		return resolution{outcome: audit.OutcomeNotApplied, why: "the table is gone"}
	case readErr != nil:
		return resolution{outcome: audit.OutcomeUnknown, why: "the record could not be read again: " + readErr.Error()}
	case w.tableID != "" && rec.ID != w.tableID:
		return resolution{outcome: audit.OutcomeNotApplied, why: fmt.Sprintf("the table is another one now (id %s)", rec.ID)}
	case w.etagBefore != "" && w.etagMoves && rec.Etag == w.etagBefore:
		return resolution{outcome: audit.OutcomeNotApplied, why: fmt.Sprintf("the record's etag is still %s, the one the write was guarded by", rec.Etag)}
	case w.written != "" && rec.Etag != w.written:
		return resolution{outcome: audit.OutcomeNotApplied, why: fmt.Sprintf("the record's etag is %s, not the %s the write set", rec.Etag, w.written)}
	}
	if miss := missing(rec, w.edit); miss != "" {
		return resolution{outcome: audit.OutcomeNotApplied, why: "the record does not hold the write: " + miss}
	}
	return resolution{outcome: audit.OutcomeSynced, etagAfter: rec.Etag,
		why: fmt.Sprintf("the record read again holds the write, etag %s", rec.Etag)}
}

// missing says which of e's values rec does not hold ("" when it holds
// them all).
func missing(rec *plan.Record, e *catalog.Edit) string {
	if e == nil {
		return ""
	}
	var miss []string
	add := func(format string, args ...any) { miss = append(miss, fmt.Sprintf(format, args...)) }
	for _, k := range slices.Sorted(maps.Keys(e.SetProperties)) {
		v := e.SetProperties[k]
		if got, ok := rec.Properties[k]; !ok || got != v {
			add("property %s is %q, the write set %q", k, got, v)
		}
	}
	for _, k := range e.RemoveProperties {
		if _, ok := rec.Properties[k]; ok {
			add("property %s is still there", k)
		}
	}
	if e.Columns != nil {
		want, err := e.Columns.SchemaString()
		got, gerr := rec.ColumnsAsLog()
		if err != nil || gerr != nil || got != want {
			add("the columns are not the ones written")
		}
	}
	if e.SetPartitioning && !slices.Equal(rec.PartitionColumns, e.PartitionColumns) && len(rec.PartitionColumns)+len(e.PartitionColumns) > 0 {
		add("the partition columns are %v, the write set %v", rec.PartitionColumns, e.PartitionColumns)
	}
	if e.Protocol != nil && (rec.Protocol == nil || !sameProtocol(*rec.Protocol, *e.Protocol)) {
		add("the protocol is not the one written")
	}
	if e.Comment != nil && rec.Comment != *e.Comment {
		add("the comment is %q, the write set %q", rec.Comment, *e.Comment)
	}
	if e.SetClustering {
		switch {
		case len(e.Clustering) > 0 && !slices.EqualFunc(rec.Clustering, e.Clustering, slices.Equal):
			add("the clustering columns are %v, the write set %v", rec.Clustering, e.Clustering)
		case len(e.Clustering) == 0 && rec.Clustering != nil:
			add("the clustering columns are still there")
		}
	}
	if rec.LastCommitVersion == nil || *rec.LastCommitVersion != e.Version {
		add("the watermark is %s, the write set %d", formatVersion(rec.LastCommitVersion), e.Version)
	}
	return strings.Join(miss, "; ")
}

// sameProtocol compares versions and the set of features.
func sameProtocol(a, b catalog.Protocol) bool {
	set := func(p catalog.Protocol) []string {
		return slices.Compact(slices.Sorted(slices.Values(slices.Concat(p.ReaderFeatures, p.WriterFeatures))))
	}
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion && slices.Equal(set(a), set(b))
}

// settle resolves a write's error when it leaves the outcome unknown
// (unsure): read reads the record again, detached from ctx (which may be
// what expired) for at most resolveTimeout. It returns the resolution
// (nil for an answer that needs none) and the error the write ends with:
// nil when the record holds the write.
func settle(ctx context.Context, err error, w *lostWrite, read func(context.Context) (*plan.Record, error)) (*resolution, error) {
	if !unsure(err) {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	rec, rerr := read(rctx)
	res := w.resolve(rec, rerr)
	res.why = fmt.Sprintf("the write's answer was lost (%v); %s", err, res.why)
	if res.outcome == audit.OutcomeSynced {
		return &res, nil
	}
	return &res, err
}

// unresolved is a write audited unknown, waiting for the next reconcile
// of its table to say what became of it.
type unresolved struct {
	w    auditWrite
	lost lostWrite
	// at is the unknown record's time, which the resolving one names.
	at time.Time
}

// lostWrites are the reconciler's unresolved writes by table. They live
// as long as the process: one that exits first leaves the unknown record
// unresolved in the audit file (its next run's reconcile writes anew from
// the record as it finds it).
type lostWrites struct {
	mu stdsync.Mutex
	m  map[string]unresolved
}

func (l *lostWrites) put(table string, u unresolved) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]unresolved{}
	}
	l.m[table] = u
}

func (l *lostWrites) take(table string) (unresolved, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.m[table]
	delete(l.m, table)
	return u, ok
}

func (l *lostWrites) has(table string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.m[table]
	return ok
}

// resolvePending resolves, from rec (the table's record as a reconcile
// has just read it), a write of the table audited unknown earlier: a new
// audit record, Resolves naming the unknown one, says what became of it.
func (r *Reconciler) resolvePending(ctx context.Context, name catalog.TableName, rec *plan.Record) {
	u, ok := r.lost.take(name.String())
	if !ok {
		return
	}
	res := u.lost.resolve(rec, nil)
	if res.outcome == audit.OutcomeSynced && rec.Etag != "" {
		res.why = fmt.Sprintf("resolved by the next reconcile: %s (the record's etag now; another write may have followed)", res.why)
	} else {
		res.why = "resolved by the next reconcile: " + res.why
	}
	var after *string
	if res.outcome == audit.OutcomeSynced {
		after = &res.etagAfter
	}
	u.w.cycle = cycleOf(ctx)
	u.w.resolves = u.at.UTC().Format(time.RFC3339Nano)
	r.logger(ctx).Info("an earlier write's unknown outcome resolved", zap.String("table", name.String()),
		zap.String("outcome", string(res.outcome)), zap.String("why", res.why))
	if aerr := r.opts.Audit.record(r.opts.Now(), u.w, res.outcome, after, res.why); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", name.String()), zap.Error(aerr))
	}
}
