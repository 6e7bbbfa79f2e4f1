package glue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
)

// Registration into Glue: a register rule's table is created in the native
// shape (NewTableInput: the one Athena, EMR Spark, Trino and Lake
// Formation all read), carrying what the log says as the sync's own
// writes do, so the new record is in sync with its log with the one
// CreateTable.

// registerRequest is a registration's Request: the TableInput
// CreateTable sends.
type registerRequest struct {
	TableInput *types.TableInput `json:"table_input"`
}

// Registration is the CreateTable that registers the log's table at loc,
// or why the record could not hold the log: a schema that cannot be
// read, a UniForm Iceberg table, a log property named like a Glue key, a
// type Glue has no column type for.
func (k *Kind) Registration(name catalog.TableName, loc string, log catalog.LogState) (*catalog.Write, error) {
	if _, err := catalog.ColumnsFromSchemaString(log.SchemaString); err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	if strings.Contains(strings.ToLower(log.Configuration["delta.universalFormat.enabledFormats"]), "iceberg") {
		return nil, fmt.Errorf("registering %s: UniForm Iceberg tables need uniform metadata, not supported", name)
	}
	var keys []string
	for key := range log.Configuration {
		if reserved(key) || schemaKey(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		return nil, fmt.Errorf("registering %s: log properties %s are Glue keys a Glue record cannot hold as the log's", name, strings.Join(keys, ", "))
	}
	d := desiredOf(log, &catalog.Record{})
	d.Location = loc
	in, err := NewTableInput(name.Table, d)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	req, err := json.Marshal(registerRequest{TableInput: in})
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return &catalog.Write{Kind: KindName, Table: name, Create: true, Location: loc, Actions: []string{"create-table"},
		LogVersion: log.Version, Request: req}, nil
}

// CreateSchema creates the database (CreateDatabase, no location); one
// that exists is no error.
func (k *Kind) CreateSchema(ctx context.Context, name catalog.TableName) error {
	err := k.c.CreateDatabase(ctx, name.Schema)
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return sendError(err)
}

// Register creates the table (CreateTable): one request that leaves a
// record in sync with the log or none, so nothing is ever rolled back. It
// returns w.LogVersion, the version the record now holds. A name taken
// (AlreadyExistsException) answers catalog.ErrAlreadyExists, the client's
// error as it is (the caller reads what took it); Glue's refusal answers
// catalog.ErrRefused with its Refusal.
func (k *Kind) Register(ctx context.Context, w *catalog.Write) (*int64, error) {
	in, err := registered(w)
	if err != nil {
		return nil, err
	}
	if err := k.c.CreateTable(ctx, w.Table.Schema, in); err != nil {
		if errors.Is(err, ErrAlreadyExists) {
			return nil, err
		}
		return nil, fmt.Errorf("registering %s: %w", w.Table, sendError(err))
	}
	v := w.LogVersion
	return &v, nil
}

// registered is the input a registration's request creates, checked to be
// w's: this kind's create of w.Table.
func registered(w *catalog.Write) (*types.TableInput, error) {
	name := w.Table
	if w.Kind != KindName || !w.Create {
		return nil, fmt.Errorf("registering %s: the write is not a Glue registration (kind %q, create %t)", name, w.Kind, w.Create)
	}
	var req registerRequest
	dec := json.NewDecoder(bytes.NewReader(w.Request))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("registering %s: request: %w", name, err)
	}
	in := req.TableInput
	switch {
	case in == nil:
		return nil, fmt.Errorf("registering %s: request: table_input: missing", name)
	case !strings.EqualFold(aws.ToString(in.Name), name.Table):
		return nil, fmt.Errorf("registering %s: request: table_input: Name %q is another table", name, aws.ToString(in.Name))
	}
	return in, nil
}
