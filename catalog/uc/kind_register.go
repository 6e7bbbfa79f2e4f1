package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

// ActionCreateTable names a registration's write (catalog.Write.Actions).
const ActionCreateTable = "create-table"

// registrationError is a registration that cannot be made: it answers
// errors.Is(catalog.ErrUnsupported), its message unchanged.
type registrationError struct{ err error }

func (e *registrationError) Error() string        { return e.err.Error() }
func (e *registrationError) Unwrap() error        { return e.err }
func (e *registrationError) Is(target error) bool { return target == catalog.ErrUnsupported }

// Registration is the createTable that registers the log's table in Unity
// Catalog as an EXTERNAL table at location, carrying exactly what the log
// says (columns, partitioning, protocol, configuration, clustering,
// description), as a Write whose Request is the CreateTableRequest. Its
// errors (a schema that does not parse, types Unity Catalog cannot store,
// a UniForm Iceberg table) answer catalog.ErrUnsupported and read
// "registering <name>: ...".
func (k *Kind) Registration(name catalog.TableName, location string, log catalog.LogState) (*catalog.Write, error) {
	req, err := registrationFor(name, location, log)
	if err != nil {
		return nil, &registrationError{err}
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return &catalog.Write{Kind: KindName, Table: name, Create: true, Location: location, Actions: []string{ActionCreateTable},
		LogVersion: log.Version, Request: b}, nil
}

// registrationFor is the createTable request of Registration.
func registrationFor(name catalog.TableName, location string, log catalog.LogState) (CreateTableRequest, error) {
	if log.SchemaElided() {
		return CreateTableRequest{}, fmt.Errorf("registering %s: the log's schema string is not at hand (a compact snapshot keeps its digest only)", name)
	}
	cols, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		return CreateTableRequest{}, fmt.Errorf("registering %s: %w", name, err)
	}
	if bad := catalog.UnsupportedTypes(cols); len(bad) > 0 {
		return CreateTableRequest{}, fmt.Errorf("registering %s: types the catalog cannot store: %s",
			name, strings.Join(bad, ", "))
	}
	if strings.Contains(strings.ToLower(log.Configuration["delta.universalFormat.enabledFormats"]), "iceberg") {
		return CreateTableRequest{}, fmt.Errorf("registering %s: UniForm Iceberg tables need uniform metadata, not supported", name)
	}
	props := map[string]string{}
	for k, v := range log.Configuration {
		if !catalog.IsDerivedProperty(k) {
			props[k] = v
		}
	}
	parts := log.PartitionColumns
	if parts == nil {
		parts = []string{} // the catalog wants [] for no partition columns
	}
	req := CreateTableRequest{
		Name:                  name.Table,
		Location:              location,
		TableType:             TableTypeExternal,
		Comment:               log.Description,
		Columns:               cols,
		PartitionColumns:      parts,
		Protocol:              log.Protocol,
		Properties:            props,
		LastCommitTimestampMs: max(log.CommitTimestamp, 1),
	}
	if log.Clustering != nil {
		c := log.Clustering
		req.DomainMetadata = &catalog.DomainMetadata{Clustering: &c}
	}
	return req, nil
}

// createRequestOf is the CreateTableRequest of a registration w.
func createRequestOf(w *catalog.Write) (CreateTableRequest, error) {
	var req CreateTableRequest
	if w == nil || w.Kind != KindName || !w.Create {
		return req, errors.New("catalog: not a Unity Catalog registration")
	}
	if err := json.Unmarshal(w.Request, &req); err != nil {
		return req, fmt.Errorf("registering %s: the write's request: %w", w.Table, err)
	}
	return req, nil
}

// Registered is what a registration creates, as a plan's row shows it.
type Registered struct {
	Location string
	// Columns are "name type", with " not null" for a column that is not
	// nullable, in the schema's order.
	Columns          []string
	PartitionColumns []string
	Clustering       [][]string
	// Properties are nil when there are none.
	Properties map[string]string
	Comment    string
	Protocol   catalog.Protocol
}

// RegistrationRow is what the registration w (Registration's) creates.
func RegistrationRow(w *catalog.Write) (Registered, error) {
	req, err := createRequestOf(w)
	if err != nil {
		return Registered{}, err
	}
	reg := Registered{Location: req.Location, PartitionColumns: req.PartitionColumns, Properties: req.Properties,
		Comment: req.Comment, Protocol: req.Protocol}
	for _, f := range req.Columns.Fields {
		typ, _ := f.Type.MarshalJSON()
		col := f.Name + " " + strings.Trim(string(typ), `"`)
		if !f.Nullable {
			col += " not null"
		}
		reg.Columns = append(reg.Columns, col)
	}
	if req.DomainMetadata != nil && req.DomainMetadata.Clustering != nil {
		reg.Clustering = *req.DomainMetadata.Clustering
	}
	if len(reg.Properties) == 0 {
		reg.Properties = nil
	}
	return reg, nil
}

// deleteTimeout bounds the delete that undoes a registration whose
// watermark could not be recorded, and the read that resolves a lost
// answer to that update.
const deleteTimeout = 30 * time.Second

// Register creates the EXTERNAL table of the registration w and records
// w's log version as the catalog's watermark (the server stamps 0 at
// create), so that the new record is in sync with the log; it returns the
// version the record holds. When the watermark cannot be recorded, the
// new table is deleted again.
//
// The create's refusal (catalog.ErrRefused) and a name taken (an error
// answering catalog.ErrAlreadyExists: the caller reads what took it) are
// the client's errors as they are; every other error reads
// "registering <name>: ...".
func (k *Kind) Register(ctx context.Context, w *catalog.Write) (*int64, error) {
	req, err := createRequestOf(w)
	if err != nil {
		return nil, err
	}
	name := w.Table
	created, err := k.c.CreateTable(ctx, name.Catalog, name.Schema, req)
	if err != nil {
		if errors.Is(err, catalog.ErrAlreadyExists) || errors.Is(err, catalog.ErrRefused) {
			return nil, withRefusal(err)
		}
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	if v := created.Metadata.LastCommitVersion; v != nil && *v == w.LogVersion {
		return v, nil
	}
	up := UpdateTableRequest{
		Requirements: []Requirement{AssertTableUUID{UUID: created.Metadata.TableUUID}},
		Updates: []Update{UpdateMetadataSnapshotVersion{
			LastCommitVersion: w.LogVersion, LastCommitTimestampMs: req.LastCommitTimestampMs}},
	}
	out, err := k.c.UpdateTable(ctx, name, up)
	if err == nil {
		return out.Metadata.LastCommitVersion, nil
	}
	if v, ok := k.watermarkHeld(ctx, name, created.Metadata.TableUUID, w.LogVersion, err); ok {
		return v, nil
	}
	// Detached: the rollback must run even when ctx is what failed.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if derr := k.c.DeleteTable(dctx, name.String()); derr != nil && !IsNotFound(derr) {
		return nil, fmt.Errorf("registering %s: recording version %d: %w; deleting the new table again failed too: %v", name, w.LogVersion, err, derr)
	}
	return nil, fmt.Errorf("registering %s: recording version %d: %w (the new table was deleted again)", name, w.LogVersion, err)
}

// watermarkHeld resolves a watermark update whose answer was lost (err
// leaves unknown whether the server applied it): the record read again,
// detached from ctx, holds it when it is the table created (uuid) at
// version. A refusal the server answered to the update itself (a moved
// uuid, a gone table, a value it will not store) needs no read.
func (k *Kind) watermarkHeld(ctx context.Context, name catalog.TableName, uuid string, version int64, err error) (*int64, bool) {
	if !errors.Is(err, ErrOutcomeUnknown) &&
		(IsConflict(err) || IsNotFound(err) || errors.Is(err, catalog.ErrRefused)) {
		return nil, false
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	lt, rerr := k.c.LoadTable(rctx, name)
	if rerr != nil || lt.Metadata.TableUUID != uuid {
		return nil, false
	}
	if v := lt.Metadata.LastCommitVersion; v != nil && *v == version {
		return v, true
	}
	return nil, false
}
