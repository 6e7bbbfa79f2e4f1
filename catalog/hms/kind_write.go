package hms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
)

// writeRequest is a Write's Request: the edit of the record read (what
// Send applies to the record it reads again) and that record's
// fingerprint (what Send checks the record against before sending).
// A saved plan keeps it as its metastore write.
type writeRequest struct {
	RecordFingerprint string `json:"record_fingerprint"`
	Edit              Edit   `json:"edit"`
}

// errApply marks a record Apply could not build: flagged, not retried.
var errApply error = &sentinel{"the metastore record cannot hold the log's state", catalog.ErrUnsupported}

// ErrStaleRecord marks a write whose record is no longer the one it was
// prepared from, found before anything was sent (Send): it answers
// ErrConflict and catalog.ErrConflict.
var ErrStaleRecord = fmt.Errorf("%w: stale record", ErrConflict)

// Prepare is the write that makes read's record the log's: the record
// read with every key deltasync owns set to the log's (Apply), but for
// the properties KindOptions.IgnoreProperties names, which stay as stored,
// as an Edit of it; edit only names its actions (an HMS write sets every
// owned key). A record Apply cannot build is an error wrapping
// catalog.ErrUnsupported.
func (k *Kind) Prepare(read *catalog.Read, log catalog.LogState, edit *catalog.Edit) (*catalog.Write, error) {
	stored, _ := read.Answer.(*Table)
	if stored == nil {
		return nil, fmt.Errorf("table %s: no metastore record to plan from", read.Name)
	}
	next, err := k.next(stored.Thrift, k.desired(log, &read.Record))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errApply, err)
	}
	req, err := json.Marshal(writeRequest{RecordFingerprint: recordFingerprint(stored.Thrift), Edit: EditOf(stored.Thrift, next)})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", read.Name, err)
	}
	return &catalog.Write{Kind: KindName, Table: read.Name, TableID: read.ID, Etag: read.Etag, Edit: edit,
		Actions: edit.Actions(), LogVersion: log.Version, Request: req}, nil
}

// desired is the record the log calls for.
func (k *Kind) desired(log catalog.LogState, rec *catalog.Record) Desired {
	schema := log.SchemaString
	if schema == "" { // elided: the caller made sure the record's schema is it
		schema, _ = rec.ColumnsAsLog()
	}
	props := catalog.LogProperties(log)
	return Desired{Schema: schema, PartitionColumns: log.PartitionColumns, Comment: log.Description,
		Properties: props, Version: log.Version, CommitTimestamp: log.CommitTimestamp, Columns: k.cols}
}

// next is the table to write: stored with every key deltasync owns set
// to the log's (Apply), but for the properties the user ignores
// (diff.ignore_properties), which stay as stored.
func (k *Kind) next(stored *hm.Table, d Desired) (*hm.Table, error) {
	catalog.DropIgnored(d.Properties, k.ignore)
	next, err := Apply(stored, d)
	if err != nil {
		return nil, err
	}
	catalog.KeepIgnored(stored.Parameters, next.Parameters, k.ignore)
	return next, nil
}

// Send sends w, prepared by Prepare here or in another process (a saved
// plan): the table is read again (one get_table_req, the one WriteFrom
// makes anyway: Client.WriteChecked) and must still be
// the record w was prepared from — the same table (name and createTime:
// w.TableID), the same transient_lastDdlTime (w.Etag) and the same
// fingerprint of every parameter, serde parameter and column (so an edit
// in the same second, which leaves transient_lastDdlTime as it was, is
// seen too), else the error wraps ErrStaleRecord (catalog.ErrConflict);
// then the edit, made to that record, is written with WriteFrom's guard
// (the expected-parameter guard on HMS 4; on HMS 3 the read is made under
// the table lock), which may fail with ErrConflict too. Nothing is retried.
//
// Sent.Etag is the transient_lastDdlTime the write set (HMS 4; "" on HMS
// 3, where the server sets it), also with an error: a lost answer is
// resolved with it. It is not the write's own (Own false): another writer
// in the same second leaves the same value. A refusal (an incompatible
// column change under columns: real) answers catalog.ErrRefused and
// carries its Refusal (CatalogRefusal); a record with fields this client
// cannot carry answers catalog.ErrUnsupported.
func (k *Kind) Send(ctx context.Context, w *catalog.Write) (catalog.Sent, error) {
	name := w.Table
	req, err := k.request(w)
	if err != nil {
		return catalog.Sent{}, err
	}
	check := func(cur *Table) error {
		switch {
		case tableID(name, cur.Thrift) != w.TableID:
			return fmt.Errorf("%w: the table was dropped and created again (table_id %s, the plan's %s)", ErrStaleRecord, tableID(name, cur.Thrift), w.TableID)
		case cur.Thrift.Parameters[KeyDDLTime] != w.Etag:
			return fmt.Errorf("%w: %s is %q, the plan's %q", ErrStaleRecord, KeyDDLTime, cur.Thrift.Parameters[KeyDDLTime], w.Etag)
		case recordFingerprint(cur.Thrift) != req.RecordFingerprint:
			return fmt.Errorf("%w: its parameters, serde parameters or columns changed (record_fingerprint %s, the plan's %s)", ErrStaleRecord, recordFingerprint(cur.Thrift), req.RecordFingerprint)
		case !IsDelta(cur.Thrift):
			return fmt.Errorf("%w: not a Delta table: %s", ErrStaleRecord, notDelta(cur.Thrift))
		}
		return nil
	}
	next := func(cur *Table) *hm.Table { return req.Edit.ApplyTo(cur.Thrift) }
	ddl, err := k.c.WriteChecked(ctx, name.Schema, name.Table, check, next, k.now(), k.wait)
	return catalog.Sent{Etag: ddl}, sendError(err)
}

// request is w's request, checked against this metastore before anything
// is read: w is this kind's edit of a table of catalog KindOptions.Name,
// and it sets HMS columns only where columns: real.
func (k *Kind) request(w *catalog.Write) (writeRequest, error) {
	var req writeRequest
	switch {
	case w.Kind != KindName:
		return req, fmt.Errorf("table %s: the write is a %s's, not a Hive Metastore's: nothing sent", w.Table, w.Kind)
	case w.Create:
		return req, fmt.Errorf("table %s: the write creates the table (Register sends it): nothing sent", w.Table)
	case w.Table.Schema == "" || w.Table.Table == "":
		return req, errors.New("the write names no table: nothing sent")
	case !strings.EqualFold(w.Table.Catalog, k.name):
		return req, fmt.Errorf("table %s: not a table of this metastore (catalog.name %s): nothing sent", w.Table, k.name)
	}
	dec := json.NewDecoder(bytes.NewReader(w.Request))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("table %s: request: %w: nothing sent", w.Table, err)
	}
	if req.RecordFingerprint == "" {
		return req, fmt.Errorf("table %s: request: record_fingerprint: missing: nothing sent", w.Table)
	}
	if req.Edit.Empty() {
		return req, fmt.Errorf("table %s: request: edit: missing (the write a Hive Metastore is sent): nothing sent", w.Table)
	}
	if err := req.Edit.Check(); err != nil {
		return req, fmt.Errorf("table %s: request: edit: %w: nothing sent", w.Table, err)
	}
	if len(req.Edit.Columns) > 0 && k.cols != ColumnsReal {
		return req, fmt.Errorf("table %s: the plan sets the HMS columns, and catalog.columns is not real here: nothing sent", w.Table)
	}
	return req, nil
}

// sendError is WriteFrom's error as Send answers it: HMS's own refusal
// (an incompatible column type change under columns: real, ...) carries
// its Refusal; a record this client cannot write back whole is
// catalog.ErrUnsupported. The message stays the client's.
func sendError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrRefused):
		var he *Error
		msg := err.Error()
		if errors.As(err, &he) {
			msg = he.Err.Error()
		}
		return &RefusedError{err: err, rf: catalog.Refusal{Type: "InvalidOperationException",
			Message: strings.TrimPrefix(msg, ErrRefused.Error()+": "), Operation: "alter_table_with_environment_context"}}
	case errors.Is(err, ErrUnknownFields):
		return &catalog.ClassError{Class: catalog.ErrUnsupported, Err: err}
	}
	return err
}

// RefusedError is a write the metastore refused (ErrRefused,
// catalog.ErrRefused): the same write is refused every time.
type RefusedError struct {
	err error
	rf  catalog.Refusal
}

func (e *RefusedError) Error() string { return e.err.Error() }

func (e *RefusedError) Unwrap() error { return e.err }

// CatalogRefusal is the refusal as reports show it: Type
// InvalidOperationException, HMS's message, Operation
// alter_table_with_environment_context.
func (e *RefusedError) CatalogRefusal() catalog.Refusal { return e.rf }

// CheckWrite checks a saved write as Send does before reading anything
// (sync.SavedPlan.CheckWrites): this kind's edit of a table of this
// metastore, with a fingerprint, and nothing a sync never writes
// (EXTERNAL, a server-owned key, Spark's keys, another provider).
func (k *Kind) CheckWrite(w *catalog.Write) error {
	_, err := k.request(w)
	return err
}
