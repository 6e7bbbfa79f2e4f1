// Package notify turns table outcomes (sync.Notice) into change events and
// delivers them where people look: OpenLineage (lineage tools such as
// DataHub, OpenMetadata, Marquez), CloudEvents on a gocloud.dev/pubsub
// topic (the team's bus) and a plain webhook (chat). Delivery never holds a
// sync back: each sink has a bounded queue, retries with exponential
// backoff and jitter, and counts what it drops (dispatch.go).
package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

// Kind is what a change event reports of a table.
type Kind string

// The kinds of change event: the table outcomes that matter.
const (
	KindSynced     Kind = "synced"
	KindHeld       Kind = "held"
	KindRefused    Kind = "refused"
	KindFlagged    Kind = "flagged"
	KindRegistered Kind = "registered"
	KindOrphaned   Kind = "orphaned"
)

// Event is one change event: one table outcome that matters.
type Event struct {
	// ID is stable across resends: the same outcome of the same table at
	// the same log version and record etag has the same ID.
	ID          string    `json:"id"`
	Kind        Kind      `json:"kind"`
	Time        time.Time `json:"time"`
	Table       string    `json:"table"`
	CatalogKind string    `json:"catalog_kind"`
	Location    string    `json:"location,omitempty"`
	LogVersion  *int64    `json:"log_version,omitempty"`
	Etag        string    `json:"etag,omitempty"`
	Cycle       *int64    `json:"cycle,omitempty"`
	Instance    string    `json:"instance"`
	Reason      string    `json:"reason,omitempty"`
	Actions     []string  `json:"actions,omitempty"`
	Changes     []Change  `json:"changes,omitempty"`
	// Schema is the log's schema (metaData.schemaString) when it was read.
	Schema json.RawMessage `json:"-"`
}

// Change is one change row, as the audit trail records it; the value a
// side does not have (an added field's before, a removed one's after) is
// left out (OpenLineage's serialisers drop nulls).
type Change struct {
	Kind   string  `json:"kind"`
	Field  string  `json:"field"`
	Op     string  `json:"op"`
	Class  string  `json:"class"`
	Before *string `json:"before,omitempty"`
	After  *string `json:"after,omitempty"`
}

// KindOf says which change event, if any, a result is.
func KindOf(res sync.Result) (Kind, bool) {
	switch {
	case res.Held != "":
		return KindHeld, true
	case res.ErrorReason == sync.ReasonRefused:
		return KindRefused, true
	case res.Outcome == sync.OutcomeSynced:
		return KindSynced, true
	case res.Outcome == sync.OutcomeRegistered:
		return KindRegistered, true
	case res.Outcome == sync.OutcomeOrphaned:
		return KindOrphaned, true
	case res.Outcome == sync.OutcomeFlagged && !res.WouldUpdate:
		return KindFlagged, true
	}
	return "", false
}

// FromNotice is the change event of n, stamped now by instance; ok is
// false for an outcome that is no event (unchanged, failed, a dry run's).
func FromNotice(n sync.Notice, instance string, now time.Time) (Event, bool) {
	res := n.Result
	kind, ok := KindOf(res)
	if !ok {
		return Event{}, false
	}
	e := Event{Kind: kind, Time: now.UTC(), Table: res.Table, CatalogKind: n.CatalogKind, Location: n.Location,
		LogVersion: res.LogVersion, Etag: res.Etag, Cycle: n.Cycle, Instance: instance, Reason: res.Reason,
		Actions: res.Actions}
	if res.Held != "" {
		e.Reason = res.Held
	}
	for _, c := range n.Changes {
		if kind == KindSynced && c.Kind == plan.KindVersion && len(n.Changes) > 1 {
			continue // the watermark rides along with every sync
		}
		e.Changes = append(e.Changes, changeOf(c))
	}
	if n.SchemaString != "" && json.Valid([]byte(n.SchemaString)) {
		e.Schema = json.RawMessage(n.SchemaString)
	}
	e.ID = eventID(e)
	return e, true
}

// changeOf is a plan change as a change row.
func changeOf(c plan.Change) Change {
	before, after := c.Catalog, c.Log
	ch := Change{Kind: string(c.Kind), Field: c.Field, Op: string(c.Op), Class: string(c.Class), Before: &before, After: &after}
	switch c.Op {
	case plan.OpAdd:
		ch.Before = nil
	case plan.OpRemove:
		ch.After = nil
	}
	return ch
}

// eventID derives an event's ID from what makes the outcome: the table,
// the kind, the log version, the record's etag and the change rows. A
// resend of the same outcome has the same ID. Without an etag, a write
// (synced, registered) is told apart by its cycle; a standing state
// (held, refused, flagged, orphaned) is not, so that the same state seen
// again is the same event.
func eventID(e Event) string {
	h := sha256.New()
	v := "-"
	if e.LogVersion != nil {
		v = strconv.FormatInt(*e.LogVersion, 10)
	}
	guard := e.Etag
	if guard == "" && e.Cycle != nil && (e.Kind == KindSynced || e.Kind == KindRegistered) {
		guard = "cycle:" + strconv.FormatInt(*e.Cycle, 10)
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", e.Table, e.Kind, v, guard)
	for _, c := range e.Changes {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", c.Kind, c.Field, c.Op, c.Class, deref(c.Before), deref(c.After))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func deref(s *string) string {
	if s == nil {
		return "\x01"
	}
	return *s
}
