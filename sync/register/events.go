package register

import (
	"context"
	"slices"
	"strings"

	"github.com/deltasync/deltasync/sync/location"
)

// Registration from storage events: a commit landing under a rule's
// location template, in a directory the catalog does not record,
// registers the table at once (package sync/events asks through package
// sync: Candidate when an event names no tracked table, then At), with no
// crawl and whatever Options.Interval says. The decision is discovery's
// own (decide) for that one candidate: collision, name taken, missing
// schema, catalog-managed or refused log, allow-list, cap. What the last
// discovery found stands in for the directories the event does not name,
// so two directories that discovery saw mapping to one name stay
// unregistered. Afterwards the table is maintained as any registered table:
// Host.Track makes its root known, so its next commits' events reconcile
// it.
//
// Discovery and events never both create one location: its decision and
// create are serialised per location (Registrar.lockLocation), and the one
// that comes second sees the other's registration. A create answered
// "already exists" by a record at the same location (another process) is
// reported AlreadyRegistered, not a conflict.

// Candidate reports whether root, a table root as an object event names
// it (location.ObjectRoot), lies where a rule describes a table and this
// process has not registered it or found it recorded; name is the table
// it would be registered as.
func (a *Registrar) Candidate(root string) (name string, ok bool) {
	c := a.candidateAt(root)
	if c == nil {
		return "", false
	}
	a.mu.Lock()
	known := a.known[c.key()]
	a.mu.Unlock()
	if known {
		return "", false
	}
	return c.name.String(), true
}

// At decides and acts for the table at root as discovery would and
// returns its row. ok is false when nothing was decided: root is no
// candidate, or its log holds no commit yet (a later event or discovery
// finds it). A row with no Outcome and no Err means the table is recorded
// already under its name (registered meanwhile by discovery, or found by
// the catalog view): nothing to report. A row flagged or waiting stays in
// Kept until the next discovery decides again.
func (a *Registrar) At(ctx context.Context, root string) (row Row, ok bool) {
	c := a.candidateAt(root)
	if c == nil {
		return Row{}, false
	}
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
	rows, found := a.decideAll(ctx, []*candidate{c}, byName)
	if len(rows) == 0 {
		if found == 0 {
			return Row{}, false
		}
		return Row{Table: c.name.String()}, true
	}
	if rows[0].Outcome != Registered {
		a.keepAlso(rows[0].Table)
	}
	return rows[0], true
}

// candidateAt is the candidate at an event's table root (nil: no rule
// describes it, or the name it maps to is another shard's). The first rule
// that describes it names it.
func (a *Registrar) candidateAt(root string) *candidate {
	if a == nil {
		return nil
	}
	for _, t := range a.rules {
		if loc, vals, ok := t.matchRoot(root); ok {
			c := a.candidate(t, loc, vals)
			if !a.host.Owns(c.name.String()) {
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
func (t *template) matchRoot(root string) (location.Location, map[string]string, bool) {
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
