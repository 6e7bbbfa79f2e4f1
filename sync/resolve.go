package sync

import (
	"context"
	"fmt"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/plan"
)

// unresolved is a write audited unknown, waiting for the next reconcile
// of its table to say what became of it.
type unresolved struct {
	w    change.AuditWrite
	lost change.LostWrite
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
	res := u.lost.Resolve(rec, nil)
	if res.Outcome == audit.OutcomeSynced && rec.Etag != "" {
		res.Why = fmt.Sprintf("resolved by the next reconcile: %s (the record's etag now; another write may have followed)", res.Why)
	} else {
		res.Why = "resolved by the next reconcile: " + res.Why
	}
	var after *string
	if res.Outcome == audit.OutcomeSynced {
		after = &res.EtagAfter
	}
	u.w.Cycle = cycleOf(ctx)
	u.w.Resolves = u.at.UTC().Format(time.RFC3339Nano)
	r.logger(ctx).Info("an earlier write's unknown outcome resolved", zap.String("table", name.String()),
		zap.String("outcome", string(res.Outcome)), zap.String("why", res.Why))
	if aerr := r.opts.Audit.Record(r.opts.Now(), u.w, res.Outcome, after, res.Why); aerr != nil {
		r.logger(ctx).Error("audit record not written", zap.String("table", name.String()), zap.Error(aerr))
	}
}
