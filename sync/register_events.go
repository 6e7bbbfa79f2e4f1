package sync

import (
	"context"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/sync/location"
)

// Registration from storage events: a commit landing under a register
// rule's location template, in a directory the catalog does not record,
// registers the table at once (package sync/events calls RegisterCandidate
// when an event names no tracked table, then RegisterAt), with no crawl and
// whatever register.interval says. The decision is discovery's own
// (registerOne) for that one candidate: collision, name taken, missing schema,
// catalog-managed or refused log, allow-list, cap. What the last discovery
// found stands in for the directories the event does not name, so two
// directories that discovery saw mapping to one name stay unregistered.
// Afterwards the table is maintained as any adopted table: the Dirty index
// knows its root, so its next commits' events reconcile it.
//
// Discovery and events never both create one location: its decision and
// create are serialised per location (registrar.lockLocation), and the one
// that comes second sees the other's registration. A create answered
// "already exists" by a record at the same location (another process) is
// reported already_registered, not a conflict.

// RegisterCandidate reports whether root, a table root as an object event
// names it (location.ObjectRoot), lies where a register rule describes a
// table and this process has not registered it or found it recorded; name
// is the table it would be registered as.
func (r *Reconciler) RegisterCandidate(root string) (name string, ok bool) {
	c := r.candidateAt(root)
	if c == nil {
		return "", false
	}
	a := r.registrar
	a.mu.Lock()
	known := a.known[c.key()]
	a.mu.Unlock()
	if known {
		return "", false
	}
	return c.name.String(), true
}

// RegisterAt decides and acts for the table at root as discovery would,
// records the row as the table's status and returns it. ok is false when
// nothing was decided: root is no candidate, or its log holds no commit
// yet (a later event or discovery finds it). A result with no Outcome
// means the table is recorded already under its name (registered meanwhile
// by discovery, or found by the catalog view): nothing to report.
func (r *Reconciler) RegisterAt(ctx context.Context, root string) (res Result, ok bool) {
	c := r.candidateAt(root)
	if c == nil {
		return Result{}, false
	}
	a := r.registrar
	byName := map[string][]string{}
	if c.err == nil {
		k := strings.ToLower(c.name.String())
		a.mu.Lock()
		locs := slices.Clone(a.seen[k])
		a.mu.Unlock()
		if l := c.loc.String(); !slices.Contains(locs, l) {
			locs = append(locs, l)
		}
		byName[k] = locs
	}
	rows, found := r.registerPlan(ctx, []*candidate{c}, byName)
	if len(rows) == 0 {
		if found == 0 {
			return Result{}, false
		}
		return Result{Table: c.name.String()}, true
	}
	res = rows[0]
	if r.recordRegistration(res, r.log.With(zap.String("source", "event"))) {
		// Flagged or waiting: on the status page until the next
		// discovery decides again.
		a.mu.Lock()
		if !slices.Contains(a.rows, res.Table) {
			a.rows = append(a.rows, res.Table)
		}
		a.mu.Unlock()
	}
	return res, true
}

// candidateAt is the candidate at an event's table root (nil: no rule
// describes it, or the name it maps to is another shard's). The first rule
// that describes it names it.
func (r *Reconciler) candidateAt(root string) *candidate {
	a := r.registrar
	if a == nil {
		return nil
	}
	for _, t := range a.rules {
		if loc, vals, ok := t.matchRoot(root); ok {
			c := r.newCandidate(t, loc, vals)
			if !r.opts.Shard.Owns(c.name.String()) {
				return nil // another shard's to register, as discovery leaves it
			}
			return c
		}
	}
	return nil
}

// matchRoot is match for an event's table root: a canonical location
// (location.ObjectRoot) whose path segments are raw object key segments,
// as discovery's LISTs name directories. It returns the location in the
// template's own spelling.
func (t *regTemplate) matchRoot(root string) (location.Location, map[string]string, bool) {
	base := location.Canonical(t.root.String())
	if rest, ok := strings.CutPrefix(base, "az://*/"); ok {
		// An azblob:// template names no account: any account's event.
		if r, ok := strings.CutPrefix(root, "az://"); ok {
			if _, p, ok := strings.Cut(r, "/"); ok && strings.HasPrefix(p+"/", rest+"/") {
				root = "az://*/" + p
			}
		}
	}
	rest, ok := strings.CutPrefix(root, base)
	if !ok {
		return location.Location{}, nil, false
	}
	if len(t.segs) == 0 {
		return t.root, map[string]string{}, rest == ""
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok {
		return location.Location{}, nil, false
	}
	segs := strings.Split(rest, "/")
	if len(segs) != len(t.segs) {
		return location.Location{}, nil, false
	}
	vals := map[string]string{}
	loc := t.root
	for k, s := range t.segs {
		switch {
		case segs[k] == "":
			return location.Location{}, nil, false
		case s.v != "":
			vals[s.v] = segs[k]
		case s.lit != segs[k]:
			return location.Location{}, nil, false
		}
		loc.Path += "/" + segs[k]
	}
	return loc, vals, true
}

// track makes a table just registered at loc known to the source of work
// before any reconcile has read its log: Lookup finds it by its root and
// Target returns t. Nothing about its log is recorded, so no read of it
// is skipped.
func (d *Dirty) track(t Target, loc string) {
	if d == nil {
		return
	}
	name := t.Name.String()
	d.mu.Lock()
	defer d.mu.Unlock()
	dt := d.table(name)
	dt.target = t
	if root := location.Canonical(loc); root != dt.root {
		if dt.root != "" {
			d.index.Remove(dt.root, name)
		}
		d.index.Add(root, name)
		dt.root = root
	}
}
