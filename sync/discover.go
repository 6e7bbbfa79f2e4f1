package sync

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// Skipped is a selected table that is not reconciled, with the reason.
type Skipped struct {
	Table  string `json:"table"`
	Reason string `json:"reason"`
}

// discover lists, through the kind, the catalogs and schemas the
// selector (or a register rule) can match and hands emit each Delta
// table this shard owns as soon as its listing page arrives. Non-Delta
// tables are returned as skipped, sorted. Explicitly named tables are
// emitted after the listing when no page showed them, so a missing table
// is reported. Listing errors are collected; what could be listed is
// still emitted, and the named tables are emitted whatever the listing
// did. emit returning false stops the listing (cancellation).
func (r *Reconciler) discover(ctx context.Context, emit func(Target) bool) ([]Skipped, error) {
	sel := r.opts.Selector
	var skipped []Skipped
	seen := map[string]bool{}
	stopped := false
	add := func(t Target) bool {
		key := strings.ToLower(t.Name.String())
		if !r.opts.Shard.Owns(t.Name.String()) || seen[key] || r.registrar.Busy(t.Name.String()) {
			return true
		}
		seen[key] = true
		return emit(t)
	}
	err := r.kind.List(ctx, scope{r}, func(l catalog.Listed) bool {
		n := l.Name
		mode, ok := sel.Match(n.Catalog, n.Schema, n.Table)
		if !ok {
			// A table a register rule describes is kept in sync unless
			// a tables[] rule says otherwise.
			if r.registrar.Describes(n, l.Location) {
				mode, ok = ModeSync, true
			}
		}
		if !ok || !r.opts.Shard.Owns(n.String()) {
			return true
		}
		if l.NotDelta != "" {
			seen[strings.ToLower(n.String())] = true
			skipped = append(skipped, Skipped{Table: n.String(), Reason: l.NotDelta})
			return true
		}
		if !add(Target{Name: n, Mode: mode, Listed: &l}) {
			stopped = true
			return false
		}
		return true
	})
	if stopped {
		return sortSkipped(skipped), err
	}
	for _, e := range sel.Explicit() {
		n := catalog.TableName{Catalog: e[0], Schema: e[1], Table: e[2]}
		if mode, ok := sel.Match(e[0], e[1], e[2]); ok {
			if !add(Target{Name: n, Mode: mode}) {
				break
			}
		}
	}
	return sortSkipped(skipped), err
}

// scope is what a cycle's listing may skip (catalog.Scope): what the
// selector or a register rule may match, of this shard.
type scope struct{ r *Reconciler }

func (s scope) Catalogs() ([]string, bool) {
	catalogs, all := s.r.opts.Selector.Catalogs()
	ac, aall := s.r.registrar.Catalogs()
	if aall {
		return nil, true
	}
	for _, c := range ac {
		if !slices.ContainsFunc(catalogs, func(x string) bool { return strings.EqualFold(x, c) }) {
			catalogs = append(catalogs, c)
		}
	}
	return catalogs, all
}

func (s scope) MayMatchSchema(catalogName, schema string) bool {
	return s.r.opts.Selector.MayMatchSchema(catalogName, schema) || s.r.registrar.MayMatchSchema(catalogName, schema)
}

func (s scope) Wants(n catalog.TableName) bool {
	if !s.r.opts.Shard.Owns(n.String()) {
		return false
	}
	if _, ok := s.r.opts.Selector.Match(n.Catalog, n.Schema, n.Table); ok {
		return true
	}
	return s.r.registrar.MayMatchSchema(n.Catalog, n.Schema) // read, to see whether a register rule describes it
}

func sortSkipped(s []Skipped) []Skipped {
	sort.Slice(s, func(i, j int) bool { return s[i].Table < s[j].Table })
	return s
}

// listedRefusal refuses a listed table whose storage location the storage
// policy refuses, from the listing alone: the full reconcile would read the
// record only to refuse the same location before any storage request, so
// the result is the one it gives (flagged, ReasonLocation, the same
// reason), with the record's type, id and watermark as listed. ok is false
// when the listing names no location or the policy allows it.
func (r *Reconciler) listedRefusal(t Target) (Result, bool) {
	l := t.Listed
	if l == nil || l.Location == "" {
		return Result{}, false
	}
	_, _, err := r.opts.Storage.Resolve(l.Location)
	p := refused(err)
	if p == nil {
		return Result{}, false
	}
	res := Result{Table: t.Name.String(), Type: tableType(l.Type), TableID: l.ID, Mode: t.Mode,
		Attempts: 1, CatalogVersion: l.Version}
	return res.fail(p), true
}
