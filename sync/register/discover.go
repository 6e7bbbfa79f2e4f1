package register

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
)

// This file holds discovery and the decision for one directory: list the
// templates, read what the catalog records under the names they map to,
// and for each directory holding a Delta log decide, and unless a dry run
// create.

// Discover runs the register phase of a cycle when discovery is due
// (ran): its rows, and how many tables it found (directories holding a
// Delta log, registered or not). A discovery with a listing error, or
// cancelled, is due again next cycle.
func (a *Registrar) Discover(ctx context.Context) (rows []Row, found int, ran bool) {
	if a == nil {
		return nil, 0, false
	}
	now := a.host.Now()
	a.mu.Lock()
	due := a.last.IsZero() || now.Sub(a.last) >= a.opts.Interval
	a.now = map[string]bool{}
	a.created = 0
	if due {
		a.withheld = map[string]bool{} // this discovery decides them again
	}
	a.mu.Unlock()
	if !due {
		return nil, 0, false
	}
	cands, errs := a.list(ctx)
	byName := locationsByName(cands)
	rows, found = a.decideAll(ctx, cands, byName)
	for _, err := range errs {
		rows = append(rows, Row{Table: err.table, Err: fail(reasonStorage, err.err)})
	}
	a.mu.Lock()
	if len(errs) == 0 && ctx.Err() == nil {
		a.last = now
	}
	a.seen = byName
	a.mu.Unlock()
	return rows, found, true
}

// candidate is one directory a template describes.
type candidate struct {
	rule    *template
	loc     location.Location
	openURL string
	name    catalog.TableName
	err     error // the directory's name makes no table name, or its location is refused
}

func (c *candidate) key() string { return location.Canonical(c.loc.String()) }

// locationsByName maps each lower-cased name the candidates map to to
// their locations (each once).
func locationsByName(cands []*candidate) map[string][]string {
	out := map[string][]string{}
	for _, c := range cands {
		if c.err == nil {
			k := strings.ToLower(c.name.String())
			if l := c.loc.String(); !slices.Contains(out[k], l) {
				out[k] = append(out[k], l)
			}
		}
	}
	return out
}

// listError is a template directory discovery could not list.
type listError struct {
	table string // the template's name, for the report
	err   error
}

// list lists every template level by level and returns the directories
// at its full depth, in name order.
func (a *Registrar) list(ctx context.Context) ([]*candidate, []listError) {
	var out []*candidate
	var errs []listError
	for _, t := range a.rules {
		type node struct {
			loc  location.Location
			vals map[string]string
		}
		level := []node{{loc: t.root, vals: map[string]string{}}}
		for _, s := range t.segs {
			var next []node
			for _, n := range level {
				if s.v == "" {
					n.loc.Path += "/" + s.lit
					next = append(next, n)
					continue
				}
				err := a.host.ListDirs(ctx, n.loc, a.opts.ListPageSize, func(names []string) error {
					for _, name := range names {
						vals := make(map[string]string, len(n.vals)+1)
						for k, v := range n.vals {
							vals[k] = v
						}
						vals[s.v] = name
						next = append(next, node{loc: location.Location{Scheme: n.loc.Scheme, Bucket: n.loc.Bucket, Path: n.loc.Path + "/" + name}, vals: vals})
					}
					return nil
				})
				if err != nil {
					errs = append(errs, listError{table: t.rule.Name, err: fmt.Errorf("register rule %d: listing %s: %w", t.index, n.loc, err)})
				}
			}
			level = next
		}
		for _, n := range level {
			// A shard registers only the names it owns: every shard
			// lists the same directories, and two registering one name
			// would race for it (and count it twice against the cap).
			if c := a.candidate(t, n.loc, n.vals); a.host.Owns(c.name.String()) {
				out = append(out, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name.String() < out[j].name.String() })
	// Two rules describing one directory under one name: one candidate.
	out = slices.CompactFunc(out, func(a, b *candidate) bool {
		return a.err == nil && b.err == nil && a.name == b.name && a.key() == b.key()
	})
	return out, errs
}

// candidate is the directory at loc a template describes with the
// variables' values vals: its name, or why it has none, and where it is
// opened (or why the storage policy refuses it).
func (a *Registrar) candidate(t *template, loc location.Location, vals map[string]string) *candidate {
	c := &candidate{rule: t, loc: loc}
	c.name, c.err = t.nameFor(vals)
	if c.err != nil {
		c.name = catalog.TableName{Catalog: t.rule.Name, Schema: "", Table: loc.String()}
		c.err = flag(reasonConfig, fmt.Errorf("%s: no table name for it under %q: %w", loc, t.rule.Name, c.err))
	} else if l, u, err := a.host.Resolve(loc.String()); err != nil {
		c.err = err
	} else {
		c.loc, c.openURL = l, u
	}
	return c
}

// catalogView is what the catalog records for the names the candidates
// map to: its schemas and their tables' names and locations.
type catalogView struct {
	schemas map[string]map[string]bool // catalog → schema (lower-cased) → exists; nil: catalog missing
	byName  map[string]string          // lower-cased full name → location (canonical)
	byLoc   map[string]string          // canonical location → full name
	listed  map[string]bool            // lower-cased catalog.schema listed
	seq     uint64                     // the registrar's seq when it was read
}

func (a *Registrar) catalogView(ctx context.Context, cands []*candidate) (*catalogView, error) {
	v := &catalogView{schemas: map[string]map[string]bool{}, byName: map[string]string{}, byLoc: map[string]string{}, listed: map[string]bool{}}
	a.mu.Lock()
	v.seq = a.seq
	a.mu.Unlock()
	var errs []error
	// What earlier cycles read: tables outside the listed schemas too.
	for loc, name := range a.host.Recorded() {
		v.byLoc[loc] = name
	}
	for _, c := range cands {
		if c.err != nil {
			continue
		}
		cat := strings.ToLower(c.name.Catalog)
		if _, ok := v.schemas[cat]; !ok {
			m, err := a.kind.Schemas(ctx, c.name.Catalog)
			if err != nil {
				errs = append(errs, fmt.Errorf("listing schemas of %s: %w", c.name.Catalog, err))
				m = map[string]bool{}
			}
			v.schemas[cat] = m
		}
		key := cat + "." + strings.ToLower(c.name.Schema)
		if v.listed[key] || !v.schemas[cat][strings.ToLower(c.name.Schema)] {
			continue
		}
		v.listed[key] = true
		err := a.kind.Tables(ctx, c.name.Catalog, c.name.Schema, func(page []catalog.Listed) error {
			for i := range page {
				n := catalog.TableName{Catalog: c.name.Catalog, Schema: c.name.Schema, Table: page[i].Name.Table}
				loc := ""
				if page[i].Location != "" {
					loc = location.Canonical(page[i].Location)
					v.byLoc[loc] = n.String()
				}
				v.byName[strings.ToLower(n.String())] = loc
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing tables of %s: %w", key, err))
		}
	}
	return v, errors.Join(errs...)
}

// setSchema records that the schema of n exists now.
func (v *catalogView) setSchema(n catalog.TableName) {
	if m := v.schemas[strings.ToLower(n.Catalog)]; m != nil {
		m[strings.ToLower(n.Schema)] = true
	}
}

// decideAll decides, and unless a dry run acts, for every candidate; it
// returns the rows to report and how many tables it found. byName are the
// locations each (lower-cased) name is found at: two of them, and
// neither is registered. Discovery passes all it found; an event, its one
// candidate and what the last discovery found (events.go).
func (a *Registrar) decideAll(ctx context.Context, cands []*candidate, byName map[string][]string) ([]Row, int) {
	var rows []Row
	view, viewErr := a.catalogView(ctx, cands)
	found := 0
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		row, counted := a.decide(ctx, c, byName, view, viewErr)
		if counted {
			found++
		}
		if row != nil {
			rows = append(rows, *row)
		}
	}
	return rows, found
}

// decide decides, and unless a dry run acts (act), for one candidate: its row
// (nil: nothing to report, the table is recorded under its name or holds
// no commit yet) and whether it is a table (found).
func (a *Registrar) decide(ctx context.Context, c *candidate, byName map[string][]string, view *catalogView, viewErr error) (*Row, bool) {
	row := func() *Row { return &Row{Table: c.name.String(), External: true} }
	problem := func(err error) *Row { return &Row{Table: c.name.String(), Err: err} }
	if c.err != nil {
		return problem(c.err), false
	}
	key := c.key()
	if other, ok := view.byLoc[key]; ok {
		a.markKnown(key)
		if strings.EqualFold(other, c.name.String()) {
			// A registered table: its events find it even before a
			// cycle's listing has reconciled it.
			a.host.Track(c.name, c.loc.String())
			return nil, true
		}
		res := row()
		res.Outcome = AlreadyRegistered
		res.Reason = fmt.Sprintf("location %s is already registered as %s: not registered again", c.loc, other)
		return res, true
	}
	if same := byName[strings.ToLower(c.name.String())]; len(same) > 1 {
		return problem(flag(reasonConflict, fmt.Errorf("name collision: %s all map to %s under register rule %q; none is registered",
			strings.Join(same, ", "), c.name, c.rule.rule.Name))), false
	}
	if at, ok := view.byName[strings.ToLower(c.name.String())]; ok {
		return problem(flag(reasonConflict, fmt.Errorf("%s already exists at %s: the table at %s is not registered (never overwritten)",
			c.name, textOr(at, "another location"), c.loc))), false
	}
	if viewErr != nil && !view.listed[strings.ToLower(c.name.Catalog+"."+c.name.Schema)] {
		res := row()
		res.Err = fail(reasonCatalog, fmt.Errorf("not registered: %w", viewErr))
		return res, false
	}
	createSchema := false
	switch schemas := view.schemas[strings.ToLower(c.name.Catalog)]; {
	case schemas == nil:
		return problem(flag(ReasonMissingSchema, fmt.Errorf("catalog %s does not exist: %s is not registered (catalogs are never created)", c.name.Catalog, c.loc))), false
	case !schemas[strings.ToLower(c.name.Schema)]:
		if !a.opts.CreateSchemas {
			return problem(flag(ReasonMissingSchema, fmt.Errorf("schema %s.%s does not exist: %s is not registered (register.create_schemas creates it)",
				c.name.Catalog, c.name.Schema, c.loc))), false
		}
		createSchema = true
	}
	// From here to the create, discovery and an event for the same
	// location take turns; the one that comes second finds it known.
	defer a.lockLocation(key)()
	if a.registeredSince(key, view.seq) {
		return nil, true // registered meanwhile by the other
	}
	log, err := a.host.Load(ctx, c.openURL, c.loc.String())
	if errors.Is(err, deltalog.ErrNotATable) {
		return nil, false // no commit yet: not a table (a later discovery or event finds it)
	}
	if err != nil {
		return problem(err), true
	}
	res := row()
	res.LogVersion = &log.Version
	w, err := a.kind.Registration(c.name, c.loc.String(), log)
	if err == nil && catalogManaged(&log) {
		err = errors.New("the log is catalog-managed (catalogManaged table feature): it is never registered as EXTERNAL")
	}
	if err != nil {
		return problem(flag(reasonUnsupported, fmt.Errorf("not registered: %w", err))), true
	}
	reg := registrationOf(&log)
	reg.CreateSchema = createSchema
	res.Registration = &reg
	if a.host.Warn(c.name) {
		// Creating the record is a write, and a rule the user wrote
		// for this name says never to write it: the row says what
		// would be created, and why it is not.
		res.Outcome = Withheld
		res.Reason = fmt.Sprintf("not registered: a tables[] rule puts %s in mode warn, which never writes (register rule %q)", c.name, c.rule.rule.Name)
		a.mu.Lock()
		a.withheld[strings.ToLower(c.name.String())] = true
		a.mu.Unlock()
		return res, true
	}
	if a.host.DryRun() {
		res.Outcome = WouldRegister
		return res, true
	}
	a.act(ctx, c, w, res, createSchema, view)
	return res, true
}

// act creates what decide found free for c, unless the cycle's cap is
// reached: the schema first when it is missing, then the table (w); res
// says what became of it.
func (a *Registrar) act(ctx context.Context, c *candidate, w *catalog.Write, res *Row, createSchema bool, view *catalogView) {
	key := c.key()
	a.mu.Lock()
	capped := a.opts.MaxPerCycle > 0 && a.created >= a.opts.MaxPerCycle
	if !capped {
		a.created++
	}
	a.mu.Unlock()
	if capped {
		res.Outcome = WouldRegister
		res.Reason = fmt.Sprintf("waits for the next cycle: register.max_per_cycle (%d) reached", a.opts.MaxPerCycle)
		return
	}
	if createSchema {
		if err := a.kind.CreateSchema(ctx, c.name); err != nil {
			res.Err = fail(reasonCatalog, fmt.Errorf("creating schema %s.%s: %w", c.name.Catalog, c.name.Schema, err))
			return
		}
		view.setSchema(c.name)
	}
	version, err := a.create(ctx, w)
	var meanwhile *registeredMeanwhile
	switch {
	case errors.As(err, &meanwhile):
		// Another process (a second deltasync, an engine) created it at
		// this very location: it is there, and not a conflict.
		res.Outcome, res.Registration = AlreadyRegistered, nil
		res.Reason = meanwhile.Error()
		a.markKnown(key)
		return
	case err != nil:
		res.Err = err
		return
	}
	res.Outcome = Registered
	res.CatalogVersion = version
	a.markRegistered(key, c.name.String())
	// Its commits' events find it from now on, before any cycle has
	// reconciled it.
	a.host.Track(c.name, c.loc.String())
}

// registeredMeanwhile is a create answered "already exists" by a table
// at the same location: someone else registered it first.
type registeredMeanwhile struct {
	name catalog.TableName
	loc  string
}

func (e *registeredMeanwhile) Error() string {
	return fmt.Sprintf("%s was registered at %s meanwhile (by another process): not registered again", e.name, e.loc)
}

// catalogManaged reports whether the log's protocol names the
// catalogManaged feature (or its preview name).
func catalogManaged(log *catalog.LogState) bool {
	for _, f := range slices.Concat(log.Protocol.ReaderFeatures, log.Protocol.WriterFeatures) {
		if f == "catalogManaged" || f == "catalogOwned-preview" {
			return true
		}
	}
	return false
}

// create sends a registration (the kind creates the record in sync with
// the log, or leaves none) and has the host audit it. A name taken
// meanwhile is read again: at the same location it is someone else's
// registration of this table, elsewhere a conflict.
func (a *Registrar) create(ctx context.Context, w *catalog.Write) (*int64, error) {
	v, err := a.kind.Register(ctx, w)
	a.host.Audit(ctx, w, err)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, catalog.ErrUnsupported):
		return nil, flag(reasonUnsupported, fmt.Errorf("not registered: %w", err))
	case errors.Is(err, catalog.ErrRefused):
		return nil, flag(reasonRefused, fmt.Errorf("not registered: the catalog refused the create: %w", err))
	}
	if !errors.Is(err, catalog.ErrAlreadyExists) {
		return nil, fail(reasonCatalog, err)
	}
	at := ""
	if read, rerr := a.kind.Load(ctx, w.Table, nil); rerr == nil {
		at = textOr(read.StorageLocation, read.Location)
	}
	if at != "" && location.Canonical(at) == location.Canonical(w.Location) {
		return nil, &registeredMeanwhile{name: w.Table, loc: w.Location}
	}
	return nil, flag(reasonConflict, fmt.Errorf("not registered: %s was created meanwhile at %s: %w", w.Table, textOr(at, "another location"), err))
}

// registrationOf is the plan row of a registration: the record it
// creates, as the log describes it.
func registrationOf(log *catalog.LogState) Registration {
	reg := Registration{Location: log.Location, Partitioning: nonNil(log.PartitionColumns), Comment: log.Description, Protocol: log.Protocol,
		Properties: map[string]string{}}
	for k, v := range log.Configuration {
		if !catalog.IsDerivedProperty(k) {
			reg.Properties[k] = v
		}
	}
	cols, _ := catalog.ColumnsFromSchemaString(log.SchemaString)
	for _, f := range cols.Fields {
		typ, _ := f.Type.MarshalJSON()
		col := f.Name + " " + strings.Trim(string(typ), `"`)
		if !f.Nullable {
			col += " not null"
		}
		reg.Columns = append(reg.Columns, col)
	}
	reg.Clustering = log.Clustering
	if len(reg.Properties) == 0 {
		reg.Properties = nil
	}
	return reg
}

// nonNil returns s, or an empty slice for nil.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// textOr returns s, or or when s is empty.
func textOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}
