package hms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
)

// Registration into a Hive Metastore: a register rule's table is created the
// way Spark registers a Delta data-source table as EXTERNAL (EXTERNAL=TRUE,
// spark.sql.sources.provider=delta, the real location in the serde
// parameter path, sd.location Spark's -__PLACEHOLDER__ path under the
// database's location, the placeholder column col array<string> unless
// columns: real), carrying what the log says as the sync's own writes do
// (Apply): the schema, partition columns, properties, protocol, comment
// and delta.lastUpdateVersion/lastCommitTimestamp, so the new record is in
// sync with its log with the one create_table.

// registerRequest is a registration's Request: the table create_table
// sends, sd.location still the real location (Register sets Spark's
// placeholder under the database's location, read when it is sent).
type registerRequest struct {
	Table *hm.Table `json:"table"`
}

// Schemas lists the metastore's databases, lower-cased: they are the
// schemas of the one catalog named KindOptions.Name; any other catalog
// does not exist (nil, nil).
func (k *Kind) Schemas(ctx context.Context, catalogName string) (map[string]bool, error) {
	if !strings.EqualFold(catalogName, k.name) {
		return nil, nil
	}
	dbs, err := k.c.Databases(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(dbs))
	for _, db := range dbs {
		m[strings.ToLower(db)] = true
	}
	return m, nil
}

// Tables lists a database (get_all_tables) and reads its tables in
// batches for their locations (Listed.Location: a Delta table's serde
// path, any other's sd.location), types and ids; a table dropped since
// the listing is handed over by name alone (the name may still be taken).
// A database that does not exist has no tables.
func (k *Kind) Tables(ctx context.Context, catalogName, schema string, fn func([]catalog.Listed) error) error {
	names, err := k.c.TableNames(ctx, schema)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(names, listBatch) {
		got, err := k.c.GetTables(ctx, schema, chunk)
		if err != nil {
			return err
		}
		page := make([]catalog.Listed, 0, len(chunk))
		for _, n := range chunk {
			name := catalog.TableName{Catalog: catalogName, Schema: schema, Table: n}
			if t, ok := got[n]; ok {
				l := listed(name, t)
				l.Answer = nil // a page is kept until registration ends: not the whole records
				page = append(page, l)
			} else {
				page = append(page, catalog.Listed{Name: name})
			}
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// Registration is the create_table that registers the log's table at loc,
// or why the record could not hold the log: a schema that cannot be read,
// a UniForm Iceberg table, a log property named like a metastore key, or,
// with columns: real, a type Hive has no column type for. HMS keeps the
// log's schema as text: Unity Catalog's type limits do not apply.
func (k *Kind) Registration(name catalog.TableName, loc string, log catalog.LogState) (*catalog.Write, error) {
	if _, err := catalog.ColumnsFromSchemaString(log.SchemaString); err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	if strings.Contains(strings.ToLower(log.Configuration["delta.universalFormat.enabledFormats"]), "iceberg") {
		return nil, fmt.Errorf("registering %s: UniForm Iceberg tables need uniform metadata, not supported", name)
	}
	var keys []string
	for key := range log.Configuration {
		if metastoreKey(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		return nil, fmt.Errorf("registering %s: log properties %s are metastore keys a Hive Metastore record cannot hold as the log's", name, strings.Join(keys, ", "))
	}
	t, err := k.newTable(log, name, loc)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	req, err := json.Marshal(registerRequest{Table: t})
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return &catalog.Write{Kind: KindName, Table: name, Create: true, Location: loc, Actions: []string{"create-table"},
		LogVersion: log.Version, Request: req}, nil
}

// newTable is the record registering log's table at loc creates
// (sd.location still the real location: Register sets the placeholder).
func (k *Kind) newTable(log catalog.LogState, name catalog.TableName, loc string) (*hm.Table, error) {
	d := k.desired(log, &catalog.Record{})
	d.Location = loc
	return NewExternalTable(name.Schema, name.Table, d)
}

// CreateSchema creates the database at the warehouse's default location;
// one that exists is no error.
func (k *Kind) CreateSchema(ctx context.Context, name catalog.TableName) error {
	err := k.c.CreateDatabase(ctx, name.Schema, "")
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// Register reads the database's location (get_database, for Spark's
// placeholder sd.location) and creates the table (create_table): one
// request that leaves a record in sync with the log or none, so nothing
// is ever rolled back. It returns w.LogVersion, the version the record now
// holds. The metastore's refusal answers catalog.ErrRefused. A name taken
// meanwhile answers catalog.ErrAlreadyExists: AlreadyExistsException, or,
// when two creates of the name run at once on HMS 4, the loser's
// MetaException from the database's unique key (seen on 4.0.1) — whatever
// the error, a table now there is read again and its location named (the
// caller reads what took it to tell its own registration from another).
func (k *Kind) Register(ctx context.Context, w *catalog.Write) (*int64, error) {
	name := w.Table
	t, err := registered(w)
	if err != nil {
		return nil, err
	}
	dbLoc, err := k.c.DatabaseLocation(ctx, name.Schema)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	t.Sd.Location = PlaceholderLocation(dbLoc, name.Table)
	err = k.c.CreateExternalTable(ctx, t)
	switch {
	case err == nil:
		v := w.LogVersion
		return &v, nil
	case errors.Is(err, ErrRefused):
		return nil, fmt.Errorf("not registered: the metastore refused the create: %w", err)
	}
	// Taken meanwhile: AlreadyExistsException, or, when two creates of
	// the name run at once on HMS 4, the loser's MetaException from the
	// database's unique key (seen on 4.0.1). Whatever the error, a table
	// now there makes it a name taken (the caller reads what took it).
	if errors.Is(err, ErrAlreadyExists) {
		return nil, err
	}
	if _, gerr := k.c.GetTable(ctx, name.Schema, name.Table); gerr == nil {
		return nil, &catalog.ClassError{Class: catalog.ErrAlreadyExists, Err: err}
	}
	return nil, fmt.Errorf("registering %s: %w", name, err)
}

// registered is the table a registration's request creates, checked to be
// w's: this kind's create of w.Table, a table with a storage descriptor.
func registered(w *catalog.Write) (*hm.Table, error) {
	name := w.Table
	if w.Kind != KindName || !w.Create {
		return nil, fmt.Errorf("registering %s: the write is not a Hive Metastore registration (kind %q, create %t)", name, w.Kind, w.Create)
	}
	var req registerRequest
	dec := json.NewDecoder(bytes.NewReader(w.Request))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("registering %s: request: %w", name, err)
	}
	t := req.Table
	switch {
	case t == nil || t.Sd == nil:
		return nil, fmt.Errorf("registering %s: request: table: missing (or without its storage descriptor)", name)
	case !strings.EqualFold(t.DbName, name.Schema) || !strings.EqualFold(t.TableName, name.Table):
		return nil, fmt.Errorf("registering %s: request: table %s.%s is another table", name, t.DbName, t.TableName)
	}
	return t, nil
}
