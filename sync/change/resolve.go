package change

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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

// LostWrite is what a write whose answer was lost is checked against.
type LostWrite struct {
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

// Resolution is what a lost answer was found to be: Outcome synced (with
// the record's etag), not_applied or unknown, and how it was learned.
type Resolution struct {
	Outcome   audit.Outcome
	EtagAfter string
	Why       string
}

// Unsure reports whether err leaves a write's outcome unknown until the
// record is read again: anything but a refusal the catalog answered to the
// write itself (a moved etag or uuid, a gone table, a value it will not
// store, a pre-flight refusal).
func Unsure(err error) bool {
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

// Resolve says what became of w from the record read again (rec), or from
// the error reading it (readErr).
func (w *LostWrite) Resolve(rec *plan.Record, readErr error) Resolution {
	switch {
	case readErr != nil && errors.Is(readErr, catalog.ErrNotFound):
		return Resolution{Outcome: audit.OutcomeNotApplied, Why: "the table is gone"}
	case readErr != nil:
		return Resolution{Outcome: audit.OutcomeUnknown, Why: "the record could not be read again: " + readErr.Error()}
	case w.tableID != "" && rec.ID != w.tableID:
		return Resolution{Outcome: audit.OutcomeNotApplied, Why: fmt.Sprintf("the table is another one now (id %s)", rec.ID)}
	case w.etagBefore != "" && w.etagMoves && rec.Etag == w.etagBefore:
		return Resolution{Outcome: audit.OutcomeNotApplied, Why: fmt.Sprintf("the record's etag is still %s, the one the write was guarded by", rec.Etag)}
	case w.written != "" && rec.Etag != w.written:
		return Resolution{Outcome: audit.OutcomeNotApplied, Why: fmt.Sprintf("the record's etag is %s, not the %s the write set", rec.Etag, w.written)}
	}
	if miss := missing(rec, w.edit); miss != "" {
		return Resolution{Outcome: audit.OutcomeNotApplied, Why: "the record does not hold the write: " + miss}
	}
	return Resolution{Outcome: audit.OutcomeSynced, EtagAfter: rec.Etag,
		Why: fmt.Sprintf("the record read again holds the write, etag %s", rec.Etag)}
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
		add("the watermark is %s, the write set %d", versionText(rec.LastCommitVersion), e.Version)
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

// Settle resolves a write's error when it leaves the outcome unknown
// (unsure): read reads the record again, detached from ctx (which may be
// what expired) for at most resolveTimeout. It returns the resolution
// (nil for an answer that needs none) and the error the write ends with:
// nil when the record holds the write.
func Settle(ctx context.Context, err error, w *LostWrite, read func(context.Context) (*plan.Record, error)) (*Resolution, error) {
	if !Unsure(err) {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	rec, rerr := read(rctx)
	res := w.Resolve(rec, rerr)
	res.Why = fmt.Sprintf("the write's answer was lost (%v); %s", err, res.Why)
	if res.Outcome == audit.OutcomeSynced {
		return &res, nil
	}
	return &res, err
}

// LostOf is what a write whose answer may be lost is checked against.
func LostOf(w *catalog.Write, sent catalog.Sent) LostWrite {
	lw := LostWrite{tableID: w.TableID, etagBefore: w.Etag, edit: w.Edit, etagMoves: sent.Own}
	if !sent.Own {
		lw.written = sent.Etag // the guard value the write set, also when its answer was lost
	}
	return lw
}

// versionText is a version for a message: its number, or none.
func versionText(v *int64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(*v, 10)
}
