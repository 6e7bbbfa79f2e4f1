package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// Skipped is a selected table that is not reconciled, with the reason.
type Skipped struct {
	Table  string `json:"table"`
	Reason string `json:"reason"`
}

// discover lists the catalogs and schemas the selector can match and
// returns the Delta tables this shard owns, sorted by name. Non-Delta
// tables are returned as skipped. Explicitly named tables are included even
// when no listing shows them, so a missing table is reported. Listing errors
// are collected; what could be listed is still returned.
func (r *Reconciler) discover(ctx context.Context) ([]Target, []Skipped, error) {
	sel := r.opts.Selector
	var errs []error
	var targets []Target
	var skipped []Skipped
	seen := map[string]bool{}
	add := func(n catalog.TableName, mode Mode) {
		if !r.opts.Shard.Owns(n.String()) || seen[strings.ToLower(n.String())] {
			return
		}
		seen[strings.ToLower(n.String())] = true
		targets = append(targets, Target{Name: n, Mode: mode})
	}

	catalogs, all := sel.Catalogs()
	if all {
		cs, err := r.opts.Catalog.ListCatalogs(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("listing catalogs: %w", err)
		}
		catalogs = catalogs[:0]
		for _, c := range cs {
			catalogs = append(catalogs, c.Name)
		}
	}
	for _, c := range catalogs {
		schemas, err := r.opts.Catalog.ListSchemas(ctx, c)
		if err != nil {
			if !catalog.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing schemas of %s: %w", c, err))
			}
			continue
		}
		for _, s := range schemas {
			if !sel.MayMatchSchema(c, s.Name) {
				continue
			}
			tables, err := r.opts.Catalog.ListTables(ctx, c, s.Name)
			if err != nil {
				errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", c, s.Name, err))
				continue
			}
			for _, ti := range tables {
				n := catalog.TableName{Catalog: c, Schema: s.Name, Table: ti.Name}
				mode, ok := sel.Match(n.Catalog, n.Schema, n.Table)
				if !ok || !r.opts.Shard.Owns(n.String()) {
					continue
				}
				if why := notDelta(&ti); why != "" {
					seen[strings.ToLower(n.String())] = true
					skipped = append(skipped, Skipped{Table: n.String(), Reason: why})
					continue
				}
				add(n, mode)
			}
		}
	}
	for _, e := range sel.Explicit() {
		n := catalog.TableName{Catalog: e[0], Schema: e[1], Table: e[2]}
		if mode, ok := sel.Match(e[0], e[1], e[2]); ok {
			add(n, mode)
		}
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].Name.String() < targets[j].Name.String() })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Table < skipped[j].Table })
	return targets, skipped, errors.Join(errs...)
}

// notDelta says why a listed table is not a Delta table deltasync can
// reconcile ("" when it is, or when the listing does not say).
func notDelta(ti *catalog.TableInfo) string {
	typ := strings.ToUpper(ti.TableType)
	if typ != "" && typ != catalog.TableTypeManaged && typ != catalog.TableTypeExternal {
		return fmt.Sprintf("table type %s is not a Delta table", typ)
	}
	if f := strings.ToUpper(ti.DataSourceFormat); f != "" && f != "DELTA" {
		return fmt.Sprintf("data source format %s is not Delta", f)
	}
	return ""
}
