package glue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
)

// errStopped ends a listing whose emit returned false.
var errStopped = errors.New("stopped")

// List lists every database scope may match (GetDatabases, in pages of
// 100) and each one's tables (GetTables, in pages of 100, whole records),
// and hands emit each table scope wants, a table that is not Delta with
// NotDelta saying why, as each page arrives: a steady cycle over N tables
// in one database is ceil(N/100) GetTables and one GetDatabases, nothing
// per table. A catalog scope names other than KindOptions.Name is not
// this one's: nothing is listed for it. Errors of one database are
// joined, and the others are still listed; emit returning false stops the
// listing (nil).
func (k *Kind) List(ctx context.Context, scope catalog.Scope, emit func(catalog.Listed) bool) error {
	cats, all := scope.Catalogs()
	if !all && !slices.ContainsFunc(cats, func(c string) bool { return strings.EqualFold(c, k.name) }) {
		return nil
	}
	dbs, err := k.c.Databases(ctx)
	if err != nil {
		return fmt.Errorf("listing databases of %s: %w", k.name, err)
	}
	var errs []error
	for _, db := range dbs {
		if !scope.MayMatchSchema(k.name, db) {
			continue
		}
		err := k.c.TablesPages(ctx, db, func(page []types.Table) error {
			slices.SortFunc(page, func(a, b types.Table) int { return strings.Compare(aws.ToString(a.Name), aws.ToString(b.Name)) })
			for i := range page {
				name := catalog.TableName{Catalog: k.name, Schema: db, Table: aws.ToString(page[i].Name)}
				if !scope.Wants(name) {
					continue
				}
				if !emit(listed(name, &page[i])) {
					return errStopped
				}
			}
			return nil
		})
		switch {
		case errors.Is(err, errStopped):
			return nil
		case errors.Is(err, ErrNotFound): // dropped since GetDatabases
		case err != nil:
			errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", k.name, db, err))
		}
	}
	return errors.Join(errs...)
}

// listed is a listed table as a listing entry: what the fast path
// compares between cycles (UpdatedAt: the VersionId; ID; Location) and
// the record itself, which Load plans from without a request.
func listed(name catalog.TableName, t *types.Table) catalog.Listed {
	l := catalog.Listed{Name: name, Type: tableType(t), ID: tableID(name, t), Location: location(t),
		Comment: t.Parameters[KeyComment], UpdatedAt: updatedAt(t), Answer: t, NotDelta: WhyNotDelta(t)}
	if v, err := strconv.ParseInt(t.Parameters[KeyLastUpdateVersion], 10, 64); err == nil && v >= 0 {
		l.Version = &v
	}
	return l
}

// location is where a table's data is, as ReadRecord says: the serde
// parameter path when set, else sd.Location.
func location(t *types.Table) string {
	sd := t.StorageDescriptor
	if sd == nil {
		return ""
	}
	if sd.SerdeInfo != nil {
		if p := sd.SerdeInfo.Parameters[SerdePath]; p != "" {
			return p
		}
	}
	return aws.ToString(sd.Location)
}

// Schemas lists the catalog's databases, lower-cased: they are the
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

// Tables hands fn each GetTables page of a database (Name, Location,
// Type, ID; not the records, which registration does not keep). A database
// that does not exist has no tables.
func (k *Kind) Tables(ctx context.Context, catalogName, schema string, fn func([]catalog.Listed) error) error {
	err := k.c.TablesPages(ctx, schema, func(page []types.Table) error {
		out := make([]catalog.Listed, 0, len(page))
		for i := range page {
			l := listed(catalog.TableName{Catalog: catalogName, Schema: schema, Table: aws.ToString(page[i].Name)}, &page[i])
			l.Answer = nil // a page is kept until registration ends: not the whole records
			out = append(out, l)
		}
		return fn(out)
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
