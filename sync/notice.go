package sync

import (
	"context"

	"github.com/deltasync/deltasync/sync/plan"
)

// Notifier is told every table outcome (sync/notify turns those that
// matter into change events for lineage tools, a bus or a webhook). Notify
// is called on the reconcile's goroutine after the outcome is recorded: it
// must not block (queue and return).
type Notifier interface {
	Notify(Notice)
}

// Notice is one table outcome as told to a Notifier: the Result, the
// catalog kind, and what the log said that the Result does not keep.
type Notice struct {
	Result Result
	// CatalogKind is the catalog kind's name (catalog.Kind.Name):
	// "unity-catalog", "hive-metastore", "glue".
	CatalogKind string
	// Location is the table's storage location ("" when not read).
	Location string
	// SchemaString is the log's metaData.schemaString as read ("" when the
	// log was not read, or read from a compact snapshot that keeps only
	// its digest: the schema then equals the catalog's columns).
	SchemaString string
	// Changes are the plan's change rows (kind, field, op, class, values).
	Changes []plan.Change
	// Cycle is the cycle the outcome belongs to (nil outside one).
	Cycle *int64
}

// notify hands res to the Notifier, with what the log read said (n; nil
// when no full read was made).
func (r *Reconciler) notify(ctx context.Context, res Result, n *notice) {
	if r.opts.Notifier == nil {
		return
	}
	no := Notice{Result: res, CatalogKind: r.opts.Catalog.Name(), Cycle: cycleOf(ctx)}
	if n != nil {
		no.Location, no.SchemaString = n.location, n.schemaString
	}
	if res.Registration != nil && no.Location == "" {
		no.Location = res.Registration.Location
	}
	if res.Plan != nil {
		no.Changes = res.Plan.Changes()
	}
	r.opts.Notifier.Notify(no)
}

// notice is what a full reconcile read of the table, kept (in records)
// only until notify hands it on.
type notice struct {
	location, schemaString string
}

// noticeOf is what seen read, for the Notifier; nil when nothing was.
func noticeOf(seen *observed) *notice {
	if seen.rec.Location == "" && seen.log.SchemaString == "" {
		return nil
	}
	return &notice{location: seen.rec.Location, schemaString: seen.log.SchemaString}
}
