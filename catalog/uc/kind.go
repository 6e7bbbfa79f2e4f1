package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdsync "sync"

	"github.com/deltasync/deltasync/catalog"
)

// KindName is the Unity Catalog kind's name in saved plans and reports.
const KindName = "unity-catalog"

// whyReadOnly is the reason a table of a catalog without the Delta API is
// flagged with (Check's ReadOnly), and the catalog is logged with.
const whyReadOnly = "catalog has no Delta API: read-only, drift is flagged, never written"

// KindOptions configure a Kind.
type KindOptions struct {
	// OnReadOnly, when set, is called once for each catalog the kind
	// finds to have no Delta API (and reads read-only from then on), with
	// the getConfig error that showed it: the caller logs it.
	OnReadOnly func(ctx context.Context, catalogName string, err error)
}

// Kind is Unity Catalog as a catalog.Kind: tables are read and written
// through its Delta API (loadTable, updateTable guarded by the record's
// uuid and etag, createTable), with the classic API for what the Delta API
// has no field for (the comment, the storage location) and for catalogs
// without the Delta API, which are read-only (see Load).
//
// A Kind keeps one thing in memory: the catalogs found to have no Delta
// API, for its lifetime. A Write it prepared is sent from the Write alone.
type Kind struct {
	c    *Client
	opts KindOptions

	mu stdsync.Mutex
	// noDeltaAPI are the catalogs found to have no Delta API.
	noDeltaAPI map[string]bool
}

// NewKind returns the Unity Catalog kind that reads and writes through c.
func NewKind(c *Client, o KindOptions) *Kind { return &Kind{c: c, opts: o} }

var (
	_ catalog.Kind   = (*Kind)(nil)
	_ catalog.Vendor = (*Kind)(nil)
)

// Name is "unity-catalog".
func (k *Kind) Name() string { return KindName }

// Check flags every drift of a table whose catalog has no Delta API
// (ReadOnly): there is no updateTable to write it with. Unity Catalog
// stores no column type the Delta API does not know (AnyType is false).
func (k *Kind) Check(_ catalog.LogState, read *catalog.Read) catalog.Check {
	var c catalog.Check
	if read != nil && k.readOnly(read.Name.Catalog) {
		c.ReadOnly = whyReadOnly
	}
	return c
}

// wireRequest is a Write's Request: the updateTable actions in their wire
// form, without the requirements (the Write's TableID and Etag are the
// guard).
type wireRequest struct {
	Updates json.RawMessage `json:"updates"`
}

// requestOf is updates as a Write's Request: {"updates":[...]}.
func requestOf(updates []Update) (json.RawMessage, error) {
	b, err := json.Marshal(UpdateTableRequest{Updates: updates})
	if err != nil {
		return nil, err
	}
	var w wireRequest
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// WriteUpdates are the updateTable actions w's Request carries (a Write
// this kind prepared, not a registration).
func WriteUpdates(w *catalog.Write) ([]Update, error) {
	if w == nil {
		return nil, errors.New("catalog: no write")
	}
	if w.Kind != KindName {
		return nil, fmt.Errorf("catalog: table %s: a %q write is not Unity Catalog's", w.Table, w.Kind)
	}
	if w.Create {
		return nil, fmt.Errorf("catalog: table %s: a registration carries no updates", w.Table)
	}
	var req UpdateTableRequest
	if err := json.Unmarshal(w.Request, &req); err != nil {
		return nil, fmt.Errorf("catalog: table %s: the write's request: %w", w.Table, err)
	}
	return req.Updates, nil
}

// Prepare is the updateTable that makes read hold the log's state: edit's
// changes as Delta API actions (UpdatesFor), the watermark last, guarded by
// read's uuid and etag.
func (k *Kind) Prepare(read *catalog.Read, log catalog.LogState, edit *catalog.Edit) (*catalog.Write, error) {
	if read == nil || edit == nil {
		return nil, errors.New("catalog: Prepare needs the record read and an edit")
	}
	updates := UpdatesFor(edit)
	req, err := requestOf(updates)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", read.Name, err)
	}
	return &catalog.Write{Kind: KindName, Table: read.Name, TableID: read.ID, Etag: read.Etag, Edit: edit,
		Actions: edit.Actions(), LogVersion: log.Version, Request: req}, nil
}

// Preflight is the client's own width check of w (Limits.CheckUpdate), for
// a dry run: a plan says the update would be refused rather than that it
// would be sent. nil when the check passes (or w carries no updates it can
// read: Send then says why).
func (k *Kind) Preflight(w *catalog.Write) *catalog.Refusal {
	updates, err := WriteUpdates(w)
	if err != nil {
		return nil
	}
	if err := k.c.Limits().CheckUpdate(UpdateTableRequest{Updates: updates}); err != nil {
		if rf, ok := AsRefusal(err); ok {
			return &rf
		}
	}
	return nil
}

// Send sends w as one updateTable asserting w.TableID and w.Etag. Its
// errors are the client's: a failed guard answers catalog.ErrConflict, a
// refusal catalog.ErrRefused (and carries its catalog.Refusal: a
// CatalogRefusal method catalog.AsRefusal finds), a resend whose
// earlier attempt's outcome is unknown catalog.ErrOutcomeUnknown. Sent.Own
// is set: Unity Catalog's etags are the server's, new for every write.
func (k *Kind) Send(ctx context.Context, w *catalog.Write) (catalog.Sent, error) {
	updates, err := WriteUpdates(w)
	if err != nil {
		return catalog.Sent{}, err
	}
	req := UpdateTableRequest{
		Requirements: []Requirement{AssertTableUUID{UUID: w.TableID}, AssertEtag{Etag: w.Etag}},
		Updates:      updates,
	}
	lt, err := k.c.UpdateTable(ctx, w.Table, req)
	if err != nil {
		// Own holds with an error too: every write moves the etag, so a
		// record read again at w.Etag did not take it.
		return catalog.Sent{Own: true}, withRefusal(err)
	}
	return catalog.Sent{Etag: lt.Metadata.Etag, Own: true}, nil
}

// CheckWrite checks a saved write as the server would its shape, before
// anything is sent (sync.SavedPlan.CheckWrites): Unity Catalog's
// updateTable with at least one known action, none of those only a
// MANAGED table's committer sends.
func (k *Kind) CheckWrite(w *catalog.Write) error {
	updates, err := WriteUpdates(w)
	if err != nil {
		return err
	}
	for _, u := range updates {
		if a := u.Action(); a == "add-commit" || a == "set-latest-backfilled-version" {
			return fmt.Errorf("table %s: %s is for MANAGED tables; deltasync never sends it", w.Table, a)
		}
	}
	req := UpdateTableRequest{Requirements: []Requirement{AssertTableUUID{UUID: w.TableID}, AssertEtag{Etag: w.Etag}}, Updates: updates}
	if err := req.Validate(); err != nil {
		return fmt.Errorf("table %s: %w", w.Table, err)
	}
	return nil
}
