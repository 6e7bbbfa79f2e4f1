package glue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
)

// writeRequest is a Write's Request: the whole TableInput UpdateTable
// sends, made by Apply from the record planned from. Its guard is the
// Write's Etag, that record's VersionId.
//
// Why the whole record and no re-read before sending (as the Hive
// Metastore kind does): UpdateTable replaces the whole record, and its
// VersionId is a whole-table optimistic lock — Glue takes the write only
// while the record is still at that VersionId, that is still exactly the
// record the input was made from. So the input, written back whole,
// changes only what deltasync owns, whenever it is sent: by the reconcile
// that planned it, or by apply from a saved plan an hour later (a record
// that moved meanwhile is refused, ConcurrentModificationException, and
// the table reported stale). One request per write; a re-read would add
// a GetTable and guard nothing the VersionId does not.
type writeRequest struct {
	TableInput *types.TableInput `json:"table_input"`
}

// errApply marks a record Apply could not build: flagged, not retried.
var errApply = fmt.Errorf("the Glue record cannot hold the log's state: %w", catalog.ErrUnsupported)

// Prepare is the write that makes read's record the log's: the record
// read, written back whole (InputOf), with every part deltasync owns set
// to the log's in the record's own shape (Apply), but for the properties
// KindOptions.IgnoreProperties names, which stay as stored; guarded by
// the record's VersionId (Write.Etag). edit only names its actions (a
// Glue write sets every owned part). A record Apply cannot build is an
// error wrapping catalog.ErrUnsupported.
func (k *Kind) Prepare(read *catalog.Read, log catalog.LogState, edit *catalog.Edit) (*catalog.Write, error) {
	stored, _ := read.Answer.(*types.Table)
	if stored == nil {
		return nil, fmt.Errorf("table %s: no Glue record to plan from", read.Name)
	}
	if read.Etag == "" {
		return nil, &catalog.ClassError{Class: catalog.ErrUnsupported, Msg: fmt.Sprintf("table %s: the Glue record has no VersionId to guard a write with", read.Name)}
	}
	next, err := k.next(stored, desiredOf(log, &read.Record))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errApply, err)
	}
	req, err := json.Marshal(writeRequest{TableInput: next})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", read.Name, err)
	}
	return &catalog.Write{Kind: KindName, Table: read.Name, TableID: read.ID, Etag: read.Etag, Edit: edit,
		Actions: edit.Actions(), LogVersion: log.Version, Request: req}, nil
}

// desiredOf is the record the log calls for.
func desiredOf(log catalog.LogState, rec *catalog.Record) Desired {
	schema := log.SchemaString
	if schema == "" { // elided: the caller made sure the record's schema is it
		schema, _ = rec.ColumnsAsLog()
	}
	props := catalog.LogProperties(log)
	return Desired{Schema: schema, PartitionColumns: log.PartitionColumns, Comment: log.Description,
		Properties: props, Version: log.Version, CommitTimestamp: log.CommitTimestamp}
}

// next is the input to write: stored with every part deltasync owns set
// to d (Apply), but for the properties the user ignores
// (diff.ignore_properties), which stay as stored.
func (k *Kind) next(stored *types.Table, d Desired) (*types.TableInput, error) {
	catalog.DropIgnored(d.Properties, k.ignore)
	next, err := Apply(stored, d)
	if err != nil {
		return nil, err
	}
	catalog.KeepIgnored(stored.Parameters, next.Parameters, k.ignore)
	return next, nil
}

// Send sends w, prepared by Prepare here or in another process (a saved
// plan): one UpdateTable of w's TableInput with VersionId w.Etag and
// SkipArchive as configured. A record that moved since it was read is
// refused by Glue (ConcurrentModificationException: an error wrapping
// catalog.ErrConflict); nothing is retried. Every UpdateTable moves the
// VersionId, and no other write can take the record from w.Etag once
// this one did, so a record read still at w.Etag did not take it (Own);
// the VersionId the write leaves is not in UpdateTable's answer (Etag
// ""). A refusal (InvalidInput, AccessDenied, a quota) answers
// catalog.ErrRefused and carries its Refusal.
func (k *Kind) Send(ctx context.Context, w *catalog.Write) (catalog.Sent, error) {
	req, err := k.request(w)
	if err != nil {
		return catalog.Sent{}, err
	}
	err = k.c.Update(ctx, w.Table.Schema, req.TableInput, w.Etag)
	return catalog.Sent{Own: true}, sendError(err)
}

// request is w's request, checked before anything is sent: this kind's
// update of a table of catalog KindOptions.Name, guarded by a VersionId,
// whose input is that table's, a Delta table's (the provider or
// table_type kept), and records w's log version.
func (k *Kind) request(w *catalog.Write) (writeRequest, error) {
	var req writeRequest
	switch {
	case w.Kind != KindName:
		return req, fmt.Errorf("table %s: the write is a %s's, not Glue's: nothing sent", w.Table, w.Kind)
	case w.Create:
		return req, fmt.Errorf("table %s: the write creates the table (Register sends it): nothing sent", w.Table)
	case w.Table.Schema == "" || w.Table.Table == "":
		return req, errors.New("the write names no table: nothing sent")
	case !strings.EqualFold(w.Table.Catalog, k.name):
		return req, fmt.Errorf("table %s: not a table of this Glue catalog (catalog.name %s): nothing sent", w.Table, k.name)
	case w.Etag == "":
		return req, fmt.Errorf("table %s: the write has no VersionId (etag) to guard it: nothing sent", w.Table)
	}
	dec := json.NewDecoder(bytes.NewReader(w.Request))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("table %s: request: %w: nothing sent", w.Table, err)
	}
	in := req.TableInput
	if in == nil {
		return req, fmt.Errorf("table %s: request: table_input: missing: nothing sent", w.Table)
	}
	if err := checkInput(in, w); err != nil {
		return req, fmt.Errorf("table %s: request: table_input: %w: nothing sent", w.Table, err)
	}
	return req, nil
}

// checkInput refuses an input a sync never sends: another table's, one
// that is not a Delta table's, or one that does not record w's version.
func checkInput(in *types.TableInput, w *catalog.Write) error {
	p := in.Parameters
	switch {
	case !strings.EqualFold(aws.ToString(in.Name), w.Table.Table):
		return fmt.Errorf("Name %q is another table", aws.ToString(in.Name))
	case in.TargetTable != nil || in.ViewDefinition != nil || in.ViewOriginalText != nil:
		return errors.New("a resource link or a view, never written by deltasync")
	case !strings.EqualFold(p[KeyProvider], ProviderDelta) && !strings.EqualFold(p[KeyTableType], TableTypeDelta):
		return fmt.Errorf("neither %s=delta nor %s=DELTA: not a Delta table's record", KeyProvider, KeyTableType)
	case p[KeyLastUpdateVersion] != strconv.FormatInt(w.LogVersion, 10):
		return fmt.Errorf("%s %q is not the write's log_version %d", KeyLastUpdateVersion, p[KeyLastUpdateVersion], w.LogVersion)
	}
	return nil
}

// CheckWrite checks a saved write as Send does before sending anything
// (sync.SavedPlan.CheckWrites).
func (k *Kind) CheckWrite(w *catalog.Write) error {
	_, err := k.request(w)
	return err
}

// sendError is a Glue error as a write answers it: a refusal carries its
// Refusal (CatalogRefusal); the message stays the client's.
func sendError(err error) error {
	if rf, ok := RefusalOf(err); ok {
		return &RefusedError{err: err, rf: rf}
	}
	return err
}

// RefusedError is a request Glue refused (ErrRefused, catalog.ErrRefused):
// the same request is refused every time.
type RefusedError struct {
	err error
	rf  catalog.Refusal
}

func (e *RefusedError) Error() string { return e.err.Error() }

func (e *RefusedError) Unwrap() error { return e.err }

// CatalogRefusal is the refusal as reports show it: Glue's status, error
// code, message and the operation (RefusalOf).
func (e *RefusedError) CatalogRefusal() catalog.Refusal { return e.rf }
