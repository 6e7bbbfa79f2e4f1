package uc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// List lists the catalogs scope names (every catalog, listCatalogs, when
// it names all), the schemas of each that scope may match, and hands emit
// each schema's tables as each page of listTables arrives (pages of one
// schema in the server's order, schemas and catalogs in theirs). A table
// that is not Delta is emitted with NotDelta saying why. Listing errors
// are collected and joined; what could be listed is still emitted, and a
// catalog that does not exist is no error. emit returning false stops the
// listing.
func (k *Kind) List(ctx context.Context, scope catalog.Scope, emit func(catalog.Listed) bool) error {
	var errs []error
	stop := errors.New("stopped")
	catalogs, all := scope.Catalogs()
	if all {
		cs, err := k.c.ListCatalogs(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("listing catalogs: %w", err))
		}
		catalogs = make([]string, 0, len(cs))
		for _, c := range cs {
			catalogs = append(catalogs, c.Name)
		}
	}
	for _, c := range catalogs {
		schemas, err := k.c.ListSchemas(ctx, c)
		if err != nil {
			if !IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing schemas of %s: %w", c, err))
			}
			continue
		}
		for _, s := range schemas {
			if !scope.MayMatchSchema(c, s.Name) {
				continue
			}
			err := k.c.ListTablesPages(ctx, c, s.Name, func(page []TableInfo) error {
				for i := range page {
					if !emit(listedOf(c, s.Name, &page[i])) {
						return stop
					}
				}
				return nil
			})
			if errors.Is(err, stop) {
				return errors.Join(errs...)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", c, s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// listedOf is a listed TableInfo of catalogName.schema.
func listedOf(catalogName, schema string, ti *TableInfo) catalog.Listed {
	return catalog.Listed{
		Name:     catalog.TableName{Catalog: catalogName, Schema: schema, Table: ti.Name},
		NotDelta: notDelta(ti), Type: ti.TableType, ID: ti.TableID, Location: ti.StorageLocation,
		Comment: ti.Comment, UpdatedAt: ti.UpdatedAt, Version: listedVersion(ti),
	}
}

// listedVersion is the watermark a listed record carries
// (delta.lastUpdateVersion, from which the Delta API's last-commit-version
// is parsed), or nil.
func listedVersion(ti *TableInfo) *int64 {
	v, err := strconv.ParseInt(ti.Properties[catalog.PropLastUpdateVersion], 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// notDelta says why a listed table is not a Delta table deltasync can
// reconcile ("" when it is, or when the listing does not say).
func notDelta(ti *TableInfo) string {
	typ := strings.ToUpper(ti.TableType)
	if typ != "" && typ != TableTypeManaged && typ != TableTypeExternal {
		return fmt.Sprintf("table type %s is not a Delta table", typ)
	}
	if f := strings.ToUpper(ti.DataSourceFormat); f != "" && f != "DELTA" {
		return fmt.Sprintf("data source format %s is not Delta", f)
	}
	return ""
}

// Schemas lists catalogName's schemas, lower-cased (nil, nil: the catalog
// does not exist).
func (k *Kind) Schemas(ctx context.Context, catalogName string) (map[string]bool, error) {
	ss, err := k.c.ListSchemas(ctx, catalogName)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, s := range ss {
		m[strings.ToLower(s.Name)] = true
	}
	return m, nil
}

// Tables hands fn each page of catalogName.schema's tables, as List
// describes them (Location is the storage location, "" when it records
// none).
func (k *Kind) Tables(ctx context.Context, catalogName, schema string, fn func([]catalog.Listed) error) error {
	return k.c.ListTablesPages(ctx, catalogName, schema, func(page []TableInfo) error {
		out := make([]catalog.Listed, len(page))
		for i := range page {
			out[i] = listedOf(catalogName, schema, &page[i])
		}
		return fn(out)
	})
}

// CreateSchema creates name's schema; one that exists is no error.
func (k *Kind) CreateSchema(ctx context.Context, name catalog.TableName) error {
	_, err := k.c.CreateSchema(ctx, CreateSchemaRequest{Name: name.Schema, CatalogName: name.Catalog})
	if IsAlreadyExists(err) {
		return nil
	}
	return err
}
