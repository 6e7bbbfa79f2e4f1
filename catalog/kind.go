package catalog

import (
	"context"
	"encoding/json"
)

// Kind is one kind of catalog deltasync keeps true to the Delta logs
// (Unity Catalog in catalog/uc, the Hive Metastore in catalog/hms). The
// reconcile, its fast path, policy, reports, metrics and audit trail are
// one code path over this interface; everything that depends on a
// catalog's wire protocol, its record shape, its guard and its refusals
// is the kind's, and none of its wire types leaves its package.
//
// A table's life in one reconcile: List names it (with what the listing
// carried), Load reads its record, the plan (sync/plan) compares it with
// the log, Check adds what "true to the log" means in this kind, Prepare
// builds the guarded Write for the plan's Edit, and Send sends it. A dry
// run stops after Prepare (and Preflight); a saved plan is a list of
// Writes that apply sends with Send. Errors answer errors.Is for this
// package's classes: ErrConflict (re-read and re-plan), ErrNotFound,
// ErrRefused (with a Refusal, see AsRefusal), ErrNotDelta, ErrUnsupported,
// ErrOutcomeUnknown, ErrAlreadyExists.
type Kind interface {
	// Name is the kind's name in saved plans and reports:
	// "unity-catalog", "hive-metastore".
	Name() string

	// List hands emit every table of the catalogs and schemas scope may
	// match, as each page of the listing arrives; emit returning false
	// stops it. A listed table that is not Delta is emitted with NotDelta
	// set. Errors of one catalog or schema are joined, and the rest is
	// still listed.
	List(ctx context.Context, scope Scope, emit func(Listed) bool) error
	// Load reads a table's record. from, when not nil, is the table's
	// entry in this cycle's listing: the kind may plan from what it
	// carries or save a request with it; nil means read everything fresh
	// (after a conflict, and to confirm a write).
	Load(ctx context.Context, name TableName, from *Listed) (*Read, error)
	// Check is what "true to the log" means in this kind beyond the
	// neutral comparison of Record and LogState (sync/plan).
	Check(log LogState, read *Read) Check
	// Prepare is the write that makes the record read the log's: edit's
	// changes in the kind's own request, guarded by read. An error
	// wrapping ErrUnsupported flags the table.
	Prepare(read *Read, log LogState, edit *Edit) (*Write, error)
	// Preflight is the kind's own check of w before it is sent (limits
	// the server is known to refuse): a dry run reports the refusal a
	// sync would meet. nil: nothing to say.
	Preflight(w *Write) *Refusal
	// Send sends w, guarded as Prepare made it (by w.TableID and w.Etag,
	// and whatever the kind's Request carries), and says what it left.
	// Sent.Etag may be set with an error: the guard value the write sets,
	// known before the answer (a lost answer is resolved with it). A write
	// refused may leave others to try: Fallback.
	Send(ctx context.Context, w *Write) (Sent, error)
	// Fallback is, after the catalog refused w with rf, the writes that
	// still sync what it takes, to send in turn (Unity Catalog: a column
	// rename sent in steps, or w without the refused action and without
	// the watermark); nil when there are none. Each is prepared from the
	// same read; after the first, a step's guard is the etag the previous
	// step left (sync sets it from Send's answer: Write.Etag).
	Fallback(read *Read, log LogState, edit *Edit, w *Write, rf Refusal) []*Write

	// What registration (registering tables found in storage) asks.
	//
	// Schemas lists catalogName's schemas, lower-cased (nil, nil: the
	// catalog does not exist).
	Schemas(ctx context.Context, catalogName string) (map[string]bool, error)
	// Tables hands fn each page of a schema's tables (Name, Location).
	Tables(ctx context.Context, catalogName, schema string, fn func([]Listed) error) error
	// Registration is the write that creates name's record at location,
	// in sync with log (its watermark log's version), or why it cannot be
	// made.
	Registration(name TableName, location string, log LogState) (*Write, error)
	// CreateSchema creates name's schema; one that exists is no error.
	CreateSchema(ctx context.Context, name TableName) error
	// Register sends a Registration and returns the version the record
	// now holds. A name taken meanwhile is an error wrapping
	// ErrAlreadyExists (the caller reads what took it).
	Register(ctx context.Context, w *Write) (*int64, error)
}

// Sent is what a write left on the record.
type Sent struct {
	// Etag is the record's etag after the write, "" when unknown.
	Etag string
	// Own is set, also with an error, when every write moves the record's
	// etag to one no other write can leave (Unity Catalog's etags): a
	// record read at Etag afterwards is as this write left it, and one
	// still at the guard's etag did not take it. The Hive Metastore's
	// transient_lastDdlTime is not: another writer in the same second
	// leaves the same value.
	Own bool
}

// Scope is what a listing may skip: the selection a cycle runs with.
type Scope interface {
	// Catalogs are the catalogs to list; all: every catalog there is.
	Catalogs() (names []string, all bool)
	// MayMatchSchema reports whether any table of catalog.schema may be
	// selected (a schema it cannot is not listed).
	MayMatchSchema(catalogName, schema string) bool
	// Wants reports whether the table is selected: a kind whose listing
	// reads whole records reads only these.
	Wants(name TableName) bool
}

// Listed is one table as a listing returned it.
type Listed struct {
	Name TableName
	// NotDelta says why the table is not a Delta table ("" when it is).
	NotDelta string
	// Type is the table type (EXTERNAL, MANAGED, ...), "" if unknown.
	Type string
	// ID is the record's id, "" if unknown.
	ID string
	// Location is where the record says the table is, "" if unknown.
	Location string
	// Comment is the record's comment as listed.
	Comment string
	// Version is the watermark the listed record carries, nil if none.
	Version *int64
	// UpdatedAt changes whenever the record does (Unity Catalog's
	// updated_at, the Hive Metastore's fingerprint of the record); 0 when
	// the listing carries none: the fast path then cannot skip a read.
	UpdatedAt int64
	// Answer is the kind's own answer for the table, which only the kind
	// that listed it looks into (a Hive Metastore listing holds the whole
	// record, which Load plans from without a request); nil for none.
	Answer any
}

// Read is a record as a kind read it: the neutral Record the plan
// compares, and the kind's own answer, which only the kind that read it
// looks into (a Hive Metastore's write is an edit of the record read).
type Read struct {
	Record
	Answer any
}

// Check is a kind's word on a plan, beyond the neutral comparison.
type Check struct {
	// AnyType is set when the kind stores the log's schema as written, so
	// that the Delta API's column-type limits (sync/plan's Unsupported
	// types) do not apply.
	AnyType bool
	// Unsupported are reasons the record cannot hold the log's state (the
	// table is flagged, never written).
	Unsupported []string
	// Schema is a difference in the kind's own columns the neutral
	// comparison does not see ("" for none): drift the write fixes.
	Schema string
	// ReadOnly says why no write can be sent for the table ("" when one
	// can): Unity Catalog without the Delta API is read with the classic
	// API, and every drift is flagged.
	ReadOnly string
}

// Write is one guarded write of a table's record: prepared by its kind
// from a record read (or a registration), sent by a reconcile, reported
// by a dry run, kept in a saved plan and sent by apply — the same request
// each time. The audit trail's record is made from it.
type Write struct {
	// Kind is the Kind.Name that prepared it; only that kind sends it.
	Kind  string    `json:"kind"`
	Table TableName `json:"-"`
	// Create is set for a write that creates the record (a
	// registration); otherwise it edits the record read, guarded by
	// TableID and Etag (and whatever the kind's Request carries).
	Create bool `json:"create,omitempty"`
	// Location is where a create registers the table.
	Location string `json:"location,omitempty"`
	TableID  string `json:"table_id"`
	Etag     string `json:"etag"`
	// Edit is what the write changes, in neutral terms; nil for a create.
	Edit *Edit `json:"edit,omitempty"`
	// Actions names what it changes (Edit.Actions' vocabulary).
	Actions []string `json:"actions"`
	// LogVersion is the log version it makes the record true to.
	LogVersion int64 `json:"log_version"`
	// Request is the kind's own request, exactly as it is sent (Unity
	// Catalog: the updateTable actions; the Hive Metastore: the edit of
	// the record read and the record's fingerprint).
	Request json.RawMessage `json:"request"`
}
