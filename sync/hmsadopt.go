package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/plan"
)

// Adoption into a Hive Metastore: a register rule's table is created the
// way Spark registers a Delta data-source table as EXTERNAL (EXTERNAL=TRUE,
// spark.sql.sources.provider=delta, the real location in the serde
// parameter path, sd.location Spark's -__PLACEHOLDER__ path under the
// database's location, the placeholder column col array<string> unless
// columns: real), carrying what the log says as the sync's own writes do
// (hms.Apply): the schema, partition columns, properties, protocol,
// comment and delta.lastUpdateVersion/lastCommitTimestamp, so the new
// record is in sync with its log with the one create_table.

// schemasOf: a metastore's databases are the schemas of the one catalog
// named HMSOptions.Name; any other catalog does not exist.
func (k *hmsKind) schemasOf(ctx context.Context, cat string) (map[string]bool, error) {
	if !strings.EqualFold(cat, k.name) {
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

// tablesOf lists a database (get_all_tables) and reads its tables in
// batches for their locations: a Delta table's serde path, any other's
// sd.location.
func (k *hmsKind) tablesOf(ctx context.Context, _, db string, fn func([]uc.TableInfo) error) error {
	names, err := k.c.TableNames(ctx, db)
	if errors.Is(err, hms.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(names, hmsBatch) {
		got, err := k.c.GetTables(ctx, db, chunk)
		if err != nil {
			return err
		}
		page := make([]uc.TableInfo, 0, len(chunk))
		for _, n := range chunk {
			if t, ok := got[n]; ok {
				page = append(page, uc.TableInfo{Name: n, StorageLocation: hmsLocation(t.Thrift)})
			} else {
				page = append(page, uc.TableInfo{Name: n}) // dropped since the listing: the name may still be taken
			}
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// hmsLocation is where a stored table's data is: the serde path of a
// Delta table (its sd.location is a placeholder), else sd.location.
func hmsLocation(t *hm.Table) string {
	if t.Sd == nil {
		return ""
	}
	if t.Sd.SerdeInfo != nil {
		if p := t.Sd.SerdeInfo.Parameters[hms.SerdePath]; p != "" {
			return p
		}
	}
	if hms.IsDelta(t) {
		return "" // a Delta table without a path names no location
	}
	return t.Sd.Location
}

// registration is Unity Catalog's request without its type limits (HMS
// keeps the log's schema as text), refused when the record could not hold
// the log: a log property named like a metastore key, or, with columns:
// real, a type Hive has no column type for.
func (k *hmsKind) registration(s *deltalog.Snapshot, name catalog.TableName, loc string) (uc.CreateTableRequest, error) {
	req, err := registrationFor(s, name, loc, false)
	if err != nil {
		return req, err
	}
	var keys []string
	for key := range s.Configuration() {
		if metastoreKey(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		return req, fmt.Errorf("registering %s: log properties %s are metastore keys a Hive Metastore record cannot hold as the log's", name, strings.Join(keys, ", "))
	}
	if _, err := k.newTable(s, name, loc); err != nil {
		return req, fmt.Errorf("registering %s: %w", name, err)
	}
	return req, nil
}

// newTable is the record registering s at loc creates (sd.location still
// the real location: register sets the placeholder).
func (k *hmsKind) newTable(s *deltalog.Snapshot, name catalog.TableName, loc string) (*hm.Table, error) {
	d := k.desired(LogStateOf(s, loc), &plan.Record{})
	d.Location = loc
	return hms.NewExternalTable(name.Schema, name.Table, d)
}

// createSchema creates the database at the warehouse's default location.
func (k *hmsKind) createSchema(ctx context.Context, name catalog.TableName) error {
	err := k.c.CreateDatabase(ctx, name.Schema, "")
	if errors.Is(err, hms.ErrAlreadyExists) {
		return nil
	}
	return err
}

// register reads the database's location (get_database, for Spark's
// placeholder sd.location) and creates the table (create_table): one
// request that leaves a record in sync with the log or none, so nothing
// is ever rolled back. A name taken meanwhile is re-read: at the same
// serde path it is someone else's registration of this table, else a
// conflict (so is any failed create that leaves a table there).
func (k *hmsKind) register(ctx context.Context, s *deltalog.Snapshot, name catalog.TableName, req uc.CreateTableRequest) (*int64, error) {
	t, err := k.newTable(s, name, req.Location)
	if err != nil {
		return nil, flagged(ReasonUnsupported, fmt.Errorf("not registered: %w", err))
	}
	dbLoc, err := k.c.DatabaseLocation(ctx, name.Schema)
	if err != nil {
		return nil, failed(ReasonCatalog, fmt.Errorf("registering %s: %w", name, err))
	}
	t.Sd.Location = hms.PlaceholderLocation(dbLoc, name.Table)
	err = k.c.CreateExternalTable(ctx, t)
	switch {
	case err == nil:
		v := s.Version
		return &v, nil
	case errors.Is(err, hms.ErrRefused):
		return nil, flagged(ReasonRefused, fmt.Errorf("not registered: the metastore refused the create: %w", err))
	}
	// Taken meanwhile: AlreadyExistsException, or, when two creates of
	// the name run at once on HMS 4, the loser's MetaException from the
	// database's unique key (seen on 4.0.1). Whatever the error, a table
	// now there is re-read.
	got, gerr := k.c.GetTable(ctx, name.Schema, name.Table)
	switch {
	case gerr == nil:
		if at := hmsLocation(got.Thrift); at != "" && location.Canonical(at) == location.Canonical(req.Location) {
			return nil, &registeredMeanwhile{name: name, loc: req.Location}
		}
		return nil, flagged(ReasonConflict, fmt.Errorf("not registered: %s was created meanwhile at %s: %w", name, textOr(hmsLocation(got.Thrift), "another location"), err))
	case errors.Is(err, hms.ErrAlreadyExists):
		return nil, flagged(ReasonConflict, fmt.Errorf("not registered: %s was created meanwhile: %w", name, err))
	}
	return nil, failed(ReasonCatalog, fmt.Errorf("registering %s: %w", name, err))
}
