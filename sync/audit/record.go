package audit

import (
	"encoding/json"
	"time"
)

// FormatVersion is the format_version every Record carries.
const FormatVersion = "2"

// Outcome is what became of one write.
type Outcome string

// The outcomes of a write.
const (
	// OutcomeSynced: the catalog took the update (etag_after is its new
	// etag) — it answered so, or its answer was lost and the record read
	// again holds the update (Reason says so).
	OutcomeSynced Outcome = "synced"
	// OutcomeHeld: the update was not sent because it carries destructive
	// changes and the table's rule holds them (on_destructive: hold).
	OutcomeHeld Outcome = "held"
	// OutcomeRefused: the catalog refused the update (an etag or uuid that
	// moved: a stale plan or a concurrent writer; or a value it will not
	// store), or the client refused it before sending; the record did not
	// change.
	OutcomeRefused Outcome = "refused"
	// OutcomeNotApplied: the update failed or its answer was lost (a
	// timeout, a cut connection, a 5xx, a 409 to a resend) and the record,
	// read again, does not hold it: it did not change the record.
	OutcomeNotApplied Outcome = "not_applied"
	// OutcomeUnknown: the update's answer was lost and the record could
	// not be read again to learn what became of it. A later record of the
	// same table (Resolves set to this one's time) says what did: synced
	// with the etag after, or not_applied.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeFailed is what deltasync wrote before it resolved a lost
	// answer by reading the record again: whether the record changed is
	// not known. It is no longer written; a reader of older files takes
	// it as unknown.
	OutcomeFailed Outcome = "failed"
)

// Change is one classified change an update carries: Kind (the drift
// kind: schema, properties, ...), Field ("column price", "property
// owner.team", "partition columns", ...), Op (add, remove, change, move,
// rename), Before (the record's value, null when it had none) and After
// (the log's, null when it has none), Class (destructive or
// non_destructive) and, for a changed column, Details.
type Change struct {
	Kind    string   `json:"kind"`
	Field   string   `json:"field"`
	Op      string   `json:"op"`
	Before  any      `json:"before"`
	After   any      `json:"after"`
	Class   string   `json:"class"`
	Details []string `json:"details,omitempty"`
}

// Record is one write in the audit trail.
type Record struct {
	FormatVersion string    `json:"format_version"`
	Time          time.Time `json:"time"`
	// Cycle is the reconcile cycle that wrote, nil for deltasync apply.
	Cycle *int64 `json:"cycle"`
	// Command is the deltasync command that wrote: once, run or apply.
	Command string `json:"command,omitempty"`
	// Table is the full name catalog.schema.table; TableID the record's uuid.
	Table   string `json:"table"`
	TableID string `json:"table_id"`
	// EtagBefore is the etag the update was guarded by; EtagAfter the
	// record's etag after a synced write (nil otherwise).
	EtagBefore string  `json:"etag_before"`
	EtagAfter  *string `json:"etag_after"`
	Outcome    Outcome `json:"outcome"`
	// Actions are the updateTable actions (wire names) sent, or that would
	// have been sent for a held or refused write.
	Actions []string `json:"actions"`
	Changes []Change `json:"changes"`
	// Reason says why a write was held, refused, not applied or unknown,
	// and for a synced one whose answer was lost, how it was learned.
	Reason string `json:"reason,omitempty"`
	// Resolves is, on a record that says what became of an earlier
	// unknown one of the same table, that record's time (RFC 3339): the
	// two describe one write, and this one's outcome is its outcome.
	Resolves string `json:"resolves,omitempty"`
	// LogVersion is the log version the update describes, when known.
	LogVersion       *int64 `json:"log_version,omitempty"`
	DeltasyncVersion string `json:"deltasync_version"`
}

// MarshalJSON writes the record with time in RFC 3339 (UTC, nanoseconds
// where there are any) and empty lists as [], never null.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	p := plain(r)
	if p.FormatVersion == "" {
		p.FormatVersion = FormatVersion
	}
	if p.Actions == nil {
		p.Actions = []string{}
	}
	if p.Changes == nil {
		p.Changes = []Change{}
	}
	return json.Marshal(struct {
		plain
		Time string `json:"time"`
	}{p, p.Time.UTC().Format(time.RFC3339Nano)})
}
