package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// Skipped is a selected table that is not reconciled, with the reason.
type Skipped struct {
	Table  string `json:"table"`
	Reason string `json:"reason"`
}

// discover lists the catalogs and schemas the selector can match and hands
// emit each Delta table this shard owns as soon as its listing page arrives
// (pages of one schema in the server's order, schemas and catalogs in
// theirs). Non-Delta tables are returned as skipped, sorted. Explicitly named
// tables are emitted after the listing when no page showed them, so a missing
// table is reported. Listing errors are collected; what could be listed is
// still emitted, and the named tables are emitted whatever the listing did.
// emit returning false stops the listing (cancellation).
func (r *Reconciler) discover(ctx context.Context, emit func(Target) bool) ([]Skipped, error) {
	sel := r.opts.Selector
	var errs []error
	var skipped []Skipped
	seen := map[string]bool{}
	stop := errors.New("stopped")
	add := func(t Target) bool {
		key := strings.ToLower(t.Name.String())
		if !r.opts.Shard.Owns(t.Name.String()) || seen[key] || r.adopter.registeredNow(t.Name.String()) {
			return true
		}
		seen[key] = true
		return emit(t)
	}

	catalogs, all := sel.Catalogs()
	if ac, aall := r.adopter.catalogs(); aall {
		all = true
	} else {
		for _, c := range ac {
			if !slices.ContainsFunc(catalogs, func(x string) bool { return strings.EqualFold(x, c) }) {
				catalogs = append(catalogs, c)
			}
		}
	}
	if all {
		cs, err := r.opts.Catalog.ListCatalogs(ctx)
		if err != nil {
			// The named tables need no listing: they still run (below).
			errs = append(errs, fmt.Errorf("listing catalogs: %w", err))
		}
		catalogs = catalogs[:0]
		for _, c := range cs {
			catalogs = append(catalogs, c.Name)
		}
	}
	for _, c := range catalogs {
		schemas, err := r.opts.Catalog.ListSchemas(ctx, c)
		if err != nil {
			if !uc.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing schemas of %s: %w", c, err))
			}
			continue
		}
		for _, s := range schemas {
			if !sel.MayMatchSchema(c, s.Name) && !r.adopter.mayMatchSchema(c, s.Name) {
				continue
			}
			err := r.opts.Catalog.ListTablesPages(ctx, c, s.Name, func(page []uc.TableInfo) error {
				for i := range page {
					ti := &page[i]
					n := catalog.TableName{Catalog: c, Schema: s.Name, Table: ti.Name}
					mode, ok := sel.Match(n.Catalog, n.Schema, n.Table)
					if !ok {
						// A table a register rule describes is kept in
						// sync unless a tables[] rule says otherwise.
						mode, ok = r.adopter.adoptedMode(n, ti)
					}
					if !ok || !r.opts.Shard.Owns(n.String()) {
						continue
					}
					if why := notDelta(ti); why != "" {
						seen[strings.ToLower(n.String())] = true
						skipped = append(skipped, Skipped{Table: n.String(), Reason: why})
						continue
					}
					if !add(Target{Name: n, Mode: mode, Listed: ti}) {
						return stop
					}
				}
				return nil
			})
			if errors.Is(err, stop) {
				return sortSkipped(skipped), errors.Join(errs...)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("listing tables of %s.%s: %w", c, s.Name, err))
			}
		}
	}
	for _, e := range sel.Explicit() {
		n := catalog.TableName{Catalog: e[0], Schema: e[1], Table: e[2]}
		if mode, ok := sel.Match(e[0], e[1], e[2]); ok {
			if !add(Target{Name: n, Mode: mode}) {
				break
			}
		}
	}
	return sortSkipped(skipped), errors.Join(errs...)
}

func sortSkipped(s []Skipped) []Skipped {
	sort.Slice(s, func(i, j int) bool { return s[i].Table < s[j].Table })
	return s
}

// notDelta says why a listed table is not a Delta table deltasync can
// reconcile ("" when it is, or when the listing does not say).
func notDelta(ti *uc.TableInfo) string {
	typ := strings.ToUpper(ti.TableType)
	if typ != "" && typ != uc.TableTypeManaged && typ != uc.TableTypeExternal {
		return fmt.Sprintf("table type %s is not a Delta table", typ)
	}
	if f := strings.ToUpper(ti.DataSourceFormat); f != "" && f != "DELTA" {
		return fmt.Sprintf("data source format %s is not Delta", f)
	}
	return ""
}

// listedRefusal refuses a listed table whose storage location the storage
// policy refuses, from the listing alone: the full reconcile would read the
// record only to refuse the same location before any storage request, so
// the result is the one it gives (flagged, ReasonLocation, the same
// reason), with the record's type, id and watermark as listed. ok is false
// when the listing names no location or the policy allows it.
func (r *Reconciler) listedRefusal(t Target) (Result, bool) {
	l := t.Listed
	if l == nil || l.StorageLocation == "" {
		return Result{}, false
	}
	_, _, err := r.opts.Storage.Resolve(l.StorageLocation)
	p := refused(err)
	if p == nil {
		return Result{}, false
	}
	res := Result{Table: t.Name.String(), Type: tableType(l.TableType), TableID: l.TableID, Mode: t.Mode,
		Attempts: 1, CatalogVersion: listedVersion(l)}
	return res.fail(p), true
}

// listedVersion is the watermark a listed record carries
// (delta.lastUpdateVersion, from which the Delta API's last-commit-version
// is parsed), or nil.
func listedVersion(l *uc.TableInfo) *int64 {
	v, err := strconv.ParseInt(l.Properties[catalog.PropLastUpdateVersion], 10, 64)
	if err != nil {
		return nil
	}
	return &v
}
