package hms

import (
	"context"
	"fmt"
	"slices"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"
)

// Table is a stored table as this client read it. Lost lists the fields of
// the stored record (Thrift field-id paths inside Table, e.g. "26") that the
// client's IDL could not decode: AlterTable refuses to write back a table
// with any, since the write would drop them.
type Table struct {
	Thrift *hm.Table
	Lost   []string
	// Present is which fields the read held (nil: not read from a server,
	// every field is written). AlterTable leaves out a field the read did
	// not have whose value is still the zero value.
	Present Presence
}

// Name is catalog.db.table as the stored record spells it.
func (t *Table) Name() string {
	cat := DefaultCatalog
	if t.Thrift.CatName != nil && *t.Thrift.CatName != "" {
		cat = *t.Thrift.CatName
	}
	return cat + "." + t.Thrift.DbName + "." + t.Thrift.TableName
}

// dbArg is the database argument of the calls that take no catalog field:
// HMS 3+ reads "@cat#db" as db in catalog cat; the default catalog needs no
// prefix, which every version understands.
func (c *Client) dbArg(db string) string {
	if c.opts.Catalog == DefaultCatalog {
		return db
	}
	return "@" + c.opts.Catalog + "#" + db
}

// Databases lists the catalog's databases (get_all_databases).
func (c *Client) Databases(ctx context.Context) ([]string, error) {
	var out []string
	op, arg := "get_all_databases", ""
	_, err := c.call(ctx, op, c.opts.Catalog, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		if c.opts.Catalog == DefaultCatalog {
			out, err = ms.GetAllDatabases(ctx)
		} else {
			arg = "@" + c.opts.Catalog + "#*"
			out, err = ms.GetDatabases(ctx, arg)
		}
		return err
	})
	return out, err
}

// TableNames lists the names of a database's tables (get_all_tables).
func (c *Client) TableNames(ctx context.Context, db string) ([]string, error) {
	var out []string
	_, err := c.call(ctx, "get_all_tables", c.name(db, ""), func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		out, err = ms.GetAllTables(ctx, c.dbArg(db))
		return err
	})
	return out, err
}

// GetTable reads one table (get_table_req: HMS 4 removed get_table).
func (c *Client) GetTable(ctx context.Context, db, table string) (*Table, error) {
	req := hm.NewGetTableRequest()
	req.DbName, req.TblName, req.CatName = db, table, &c.opts.Catalog
	var res *hm.GetTableResult_
	rep, err := c.callWith(ctx, "get_table_req", c.name(db, table), writeFilter{}, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		res, err = ms.GetTableReq(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Table == nil {
		return nil, &Error{Op: "get_table_req", Table: c.name(db, table), Err: fmt.Errorf("%w: the reply holds no table", ErrNotFound)}
	}
	// success (0) → GetTableResult.table (1) → the Table's own fields.
	return &Table{Thrift: res.Table, Lost: skippedUnder(rep.skipped, "0.1"), Present: presenceUnder(rep.present, "0.1")}, nil
}

// GetTables reads many tables of one database in batches of
// Options.BatchSize (get_table_objects_by_name_req), one call per batch: a
// steady cycle over unchanged tables costs N/BatchSize calls, not N. The
// result is keyed by table name; a name the server did not return is
// missing (dropped meanwhile). Lost is conservative here: a field lost
// anywhere in a batch's reply marks every table of that batch.
func (c *Client) GetTables(ctx context.Context, db string, names []string) (map[string]*Table, error) {
	out := make(map[string]*Table, len(names))
	for chunk := range slices.Chunk(names, c.opts.BatchSize) {
		req := hm.NewGetTablesRequest()
		req.DbName, req.TblNames, req.CatName = db, chunk, &c.opts.Catalog
		var res *hm.GetTablesResult_
		rep, err := c.callWith(ctx, "get_table_objects_by_name_req", c.name(db, chunk[0])+fmt.Sprintf(" (batch of %d)", len(chunk)), writeFilter{}, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
			var err error
			res, err = ms.GetTableObjectsByNameReq(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		lost := skippedUnder(rep.skipped, "0.1")
		present := presenceOfElements(rep.present, "0.1")
		for i, t := range res.GetTables() {
			if t != nil {
				// success (0) → GetTablesResult.tables (1) → element i.
				out[t.TableName] = &Table{Thrift: t, Lost: lost, Present: present[i]}
			}
		}
	}
	return out, nil
}

// CreateDatabase creates a database at location (a URI; empty: the
// warehouse default, <the default database's location>/<name>.db, as
// HMS's own Warehouse makes it: the server refuses an empty location).
func (c *Client) CreateDatabase(ctx context.Context, name, location string) error {
	if location == "" {
		wh, err := c.DatabaseLocation(ctx, "default")
		if err != nil {
			return err
		}
		location = strings.TrimRight(wh, "/") + "/" + strings.ToLower(name) + ".db"
	}
	d := hm.NewDatabase()
	d.Name, d.LocationUri, d.CatalogName = name, location, &c.opts.Catalog
	_, err := c.call(ctx, "create_database", c.name(name, ""), func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.CreateDatabase(ctx, d)
	})
	return err
}

// DropDatabase drops a database and (cascade) its tables, never their data.
func (c *Client) DropDatabase(ctx context.Context, name string, cascade bool) error {
	_, err := c.call(ctx, "drop_database", c.name(name, ""), func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.DropDatabase(ctx, c.dbArg(name), false, cascade)
	})
	return err
}

// CreateExternalTable registers t (a register rule's create): it must be an EXTERNAL_TABLE
// with EXTERNAL=TRUE, so dropping the record never deletes the data.
func (c *Client) CreateExternalTable(ctx context.Context, t *hm.Table) error {
	name := c.name(t.DbName, t.TableName)
	if t.TableType != "EXTERNAL_TABLE" || !strings.EqualFold(t.Parameters["EXTERNAL"], "TRUE") {
		return &Error{Op: "create_table", Table: name, Err: fmt.Errorf("refusing to create %q with tableType %q and EXTERNAL=%q: deltasync registers EXTERNAL tables only", name, t.TableType, t.Parameters["EXTERNAL"])}
	}
	if t.CatName == nil {
		t.CatName = &c.opts.Catalog
	}
	_, err := c.call(ctx, "create_table", name, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.CreateTable(ctx, t)
	})
	return err
}

// DropTable drops a table's record, never its data.
func (c *Client) DropTable(ctx context.Context, db, table string) error {
	_, err := c.call(ctx, "drop_table", c.name(db, table), func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.DropTable(ctx, c.dbArg(db), table, false)
	})
	return err
}

// Guard is the expectation an alter carries on HMS 4: the stored parameter
// Key must still hold Expected, checked by the server in the alter's own
// transaction (an UPDATE ... WHERE PARAM_VALUE = expected that must match
// one row). The new table must carry Key with its new value. HMS 4 fails
// an expectation on a key the stored table lacks.
type Guard struct {
	Key, Expected string
}

// AlterTable replaces the stored record of read with next
// (alter_table_with_environment_context, present in HMS 3 and 4). With a
// non-zero guard the write succeeds only if the guard holds (ErrConflict
// otherwise); a guard on a server that would ignore it (HMS < 4) is
// refused with ErrUnsupported rather than sent unguarded — take the table
// lock there (LockTable) and alter without a guard. A read that lost
// fields (read.Lost) is refused with ErrUnknownFields: an alter replaces
// the whole table.
func (c *Client) AlterTable(ctx context.Context, read *Table, next *hm.Table, g Guard) error {
	db, table := read.Thrift.DbName, read.Thrift.TableName
	name := c.name(db, table)
	if len(read.Lost) > 0 {
		return &Error{Op: "alter_table_with_environment_context", Table: name, Err: fmt.Errorf("%w: the stored record has fields %s (Thrift ids inside Table) that this client's HMS IDL does not know; writing it back would drop them", ErrUnknownFields, strings.Join(read.Lost, ", "))}
	}
	if next.DbName != db || next.TableName != table {
		return &Error{Op: "alter_table_with_environment_context", Table: name, Err: fmt.Errorf("the new record is named %s.%s: renaming is not deltasync's", next.DbName, next.TableName)}
	}
	env := hm.NewEnvironmentContext()
	env.Properties = map[string]string{}
	if g != (Guard{}) {
		ok, err := c.HasExpectedParameterGuard(ctx)
		if err != nil {
			return err
		}
		if !ok {
			v, _ := c.Version(ctx)
			return &Error{Op: "alter_table_with_environment_context", Table: name, Err: fmt.Errorf("%w: metastore version %s ignores expected_parameter_key; lock the table instead", ErrUnsupported, v)}
		}
		if _, set := next.Parameters[g.Key]; !set {
			return &Error{Op: "alter_table_with_environment_context", Table: name, Err: fmt.Errorf("guard on %q: the new record must carry the key's new value", g.Key)}
		}
		env.Properties["expected_parameter_key"] = g.Key
		env.Properties["expected_parameter_value"] = g.Expected
	}
	// The alter changes no data: the server is not to gather stats
	// (numFiles, totalSize, ...) it would add to a record without them.
	env.Properties["DO_NOT_UPDATE_STATS"] = "true"
	// new_tbl is the arguments' field 3.
	wf := writeFilter{root: "3"}
	if read.Present != nil {
		wf.omit = read.Present.absent
	}
	_, err := c.callWith(ctx, "alter_table_with_environment_context", name, wf, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.AlterTableWithEnvironmentContext(ctx, c.dbArg(db), table, next, env)
	})
	return err
}

// DatabaseLocation is a database's location URI (get_database).
func (c *Client) DatabaseLocation(ctx context.Context, name string) (string, error) {
	var d *hm.Database
	_, err := c.call(ctx, "get_database", c.name(name, ""), func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		d, err = ms.GetDatabase(ctx, c.dbArg(name))
		return err
	})
	if err != nil {
		return "", err
	}
	return d.GetLocationUri(), nil
}

// PlaceholderLocation is the sd.location Spark gives a Delta data-source
// table it registers as EXTERNAL: the table's default path under its
// database's location with "-__PLACEHOLDER__" appended, a path that
// holds no data (readers of a provider=delta table take the location from
// the serde parameter path). The metastore makes that directory at
// create, under the database's location, which it can always reach; the
// table's own storage it need not reach at all.
func PlaceholderLocation(dbLocation, table string) string {
	return strings.TrimRight(dbLocation, "/") + "/" + strings.ToLower(table) + "-__PLACEHOLDER__"
}
