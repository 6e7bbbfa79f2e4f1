package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	stdsync "sync"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/location"
	"github.com/deltasync/deltasync/sync/plan"
)

// Adoption: register rules (RegisterOptions) make deltasync create the
// catalog record of a Delta table it finds in storage under a location
// template, as an EXTERNAL table carrying exactly what the log says; the
// reconcile maintains it afterwards like a table a tables[] rule in mode
// sync selected. It never overwrites and never guesses: a name taken at
// another location, two directories mapping to one name, a missing schema,
// a catalog-managed or refused log are flagged, and nothing is created.
//
// Discovery (discoverUnregistered) lists only what the templates describe: one
// delimiter LIST per template level (deltalog.ListDirs), paginated. A
// directory whose location the catalog already records costs nothing more;
// a new one is read with one Load (ErrNotATable: not a table yet). It runs
// on its own interval (RegisterOptions.Interval); a fresh process (plan,
// once) discovers on its first cycle.

// The outcomes of registering tables found in storage.
const (
	// OutcomeRegistered: the table was created, as EXTERNAL, in sync with
	// its log.
	OutcomeRegistered Outcome = "registered"
	// OutcomeWouldRegister: a dry run found a table a run would register,
	// or a run reached RegisterOptions.MaxPerCycle and it waits.
	OutcomeWouldRegister Outcome = "would_register"
	// OutcomeAlreadyRegistered: the table's location is recorded under
	// another name; nothing is created (Reason names it).
	OutcomeAlreadyRegistered Outcome = "already_registered"
	// OutcomeOrphaned: a record whose location holds no Delta log (its
	// _delta_log is gone or empty). Never deleted, never written.
	OutcomeOrphaned Outcome = "orphaned"
)

// The error reasons of registering tables found in storage.
const (
	// ReasonMissingSchema: the catalog or schema a register rule names
	// does not exist (a schema is created only with CreateSchemas).
	ReasonMissingSchema ErrorReason = "missing_schema"
	// ReasonOrphaned: the record's location holds no Delta log.
	ReasonOrphaned ErrorReason = "orphaned"
)

// RegisterOptions configures the registration of tables found in storage
// (Options.Register).
type RegisterOptions struct {
	Rules []RegisterRule
	// Interval is how often discovery re-lists the templates (0: every
	// cycle). The first cycle always discovers.
	Interval time.Duration
	// MaxPerCycle bounds the tables created in one cycle (0: no bound);
	// the others are reported as waiting (OutcomeWouldRegister).
	MaxPerCycle int
	// CreateSchemas creates a missing schema; otherwise its tables are
	// flagged (ReasonMissingSchema). Catalogs are never created.
	CreateSchemas bool
	// ListPageSize is the page size of discovery's LISTs (0:
	// deltalog.DefaultListPageSize).
	ListPageSize int
}

// Registration is what a registration creates (or would): the plan row of
// a table found in storage.
type Registration struct {
	Location     string            `json:"location"`
	Columns      []string          `json:"columns,omitempty"`
	Partitioning []string          `json:"partition_columns,omitempty"`
	Clustering   [][]string        `json:"clustering_columns,omitempty"`
	Properties   map[string]string `json:"properties,omitempty"`
	Comment      string            `json:"comment,omitempty"`
	Protocol     catalog.Protocol  `json:"protocol"`
	// CreateSchema is set when the schema is (or would be) created first.
	CreateSchema bool `json:"create_schema,omitempty"`
}

// registrar is what the reconciler keeps of registrations between cycles.
type registrar struct {
	opts  RegisterOptions
	rules []*regTemplate

	mu   stdsync.Mutex
	last time.Time // last discovery
	// known are the canonical locations discovery need not read again:
	// recorded in the catalog (at the template's name or another).
	known map[string]bool
	// rows are the names of the last discovery's rows that stay on the
	// status page until the next discovery (flagged, waiting).
	rows []string
	// now are the tables registered in the running cycle (the listing
	// that follows does not reconcile them again).
	now map[string]bool
	// withheld are the names a tables[] rule in mode warn keeps from
	// being registered (lower-cased): no record has them, and the
	// listing does not load them as missing while the register phase
	// reports them.
	withheld map[string]bool
	// discovered is the number of tables the last discovery found.
	discovered int
	// seen are the locations the last discovery found under each name
	// (lower-cased): an event's candidate collides with them as a
	// discovered directory does (register_events.go).
	seen map[string][]string
	// created counts the tables created in the running cycle, by
	// discovery and by events together (RegisterOptions.MaxPerCycle).
	created int
	// locks serialise the decision and create of one location between
	// discovery and events; registered is the seq of each location's
	// last registration by this process (seq counts them), so a decision
	// taken on a catalog view read before it knows it is stale.
	locks      map[string]chan struct{}
	seq        uint64
	registered map[string]uint64
}

func newRegistrar(opts *RegisterOptions, policy *StoragePolicy) (*registrar, error) {
	if opts == nil || len(opts.Rules) == 0 {
		return nil, nil
	}
	a := &registrar{opts: *opts, known: map[string]bool{}, now: map[string]bool{}, withheld: map[string]bool{}, locks: map[string]chan struct{}{}, registered: map[string]uint64{}}
	var errs []error
	for i, rule := range opts.Rules {
		t, err := compileRegisterRule(i, rule, policy)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a.rules = append(a.rules, t)
	}
	if opts.MaxPerCycle < 0 {
		errs = append(errs, errors.New("register max_per_cycle: want 0 (no bound) or more"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// candidate is one directory a template describes.
type candidate struct {
	rule    *regTemplate
	loc     location.Location
	openURL string
	name    catalog.TableName
	err     error // the directory's name makes no table name, or its location is refused
}

func (c *candidate) key() string { return location.Canonical(c.loc.String()) }

// registeredMode reports whether a listed table is one a register rule
// describes (its name is what its location maps to): such a table is
// maintained in mode sync when no tables[] rule selects it.
func (a *registrar) registeredMode(n catalog.TableName, ti *catalog.Listed) (Mode, bool) {
	if a == nil || ti == nil || ti.Location == "" {
		return "", false
	}
	l, err := location.Parse(ti.Location)
	if err != nil {
		return "", false
	}
	for _, t := range a.rules {
		vals, ok := t.match(l)
		if !ok {
			continue
		}
		if want, err := t.nameFor(vals); err == nil && strings.EqualFold(want.String(), n.String()) {
			return ModeSync, true
		}
	}
	return "", false
}

// catalogs are the catalogs the templates name literally; all is set when
// one is a variable.
func (a *registrar) catalogs() (names []string, all bool) {
	if a == nil {
		return nil, false
	}
	for _, t := range a.rules {
		c := t.literalPart(0)
		if c == "" {
			return nil, true
		}
		if !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	return names, false
}

// mayMatchSchema reports whether a template can name a table in c.s.
func (a *registrar) mayMatchSchema(c, s string) bool {
	if a == nil {
		return false
	}
	for _, t := range a.rules {
		if lc := t.literalPart(0); lc != "" && !strings.EqualFold(lc, c) {
			continue
		}
		if ls := t.literalPart(1); ls != "" && !strings.EqualFold(ls, s) {
			continue
		}
		return true
	}
	return false
}

// registeredNow reports whether the running cycle registered the table,
// or whether a warn rule withholds it from registration (the register
// phase reports it): either way the listing does not reconcile it.
func (a *registrar) registeredNow(name string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now[strings.ToLower(name)] || a.withheld[strings.ToLower(name)]
}

// keep are the names whose status stays while no discovery runs.
func (a *registrar) keep() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.rows)
}

// registerFound runs the register phase of a cycle when discovery is due and
// returns its rows, each already recorded as the table's status.
func (r *Reconciler) registerFound(ctx context.Context, log *zap.Logger) []Result {
	a := r.registrar
	if a == nil {
		return nil
	}
	now := r.opts.Now()
	a.mu.Lock()
	due := a.last.IsZero() || now.Sub(a.last) >= a.opts.Interval
	a.now = map[string]bool{}
	a.created = 0
	a.mu.Unlock()
	if !due {
		return nil
	}
	a.mu.Lock()
	a.withheld = map[string]bool{} // this discovery decides them again
	a.mu.Unlock()
	cands, errs := r.discoverUnregistered(ctx)
	byName := locationsByName(cands)
	rows, found := r.registerPlan(ctx, cands, byName)
	for _, err := range errs {
		rows = append(rows, Result{Table: err.table, Mode: ModeSync, Outcome: OutcomeFailed, Status: StatusUnknown,
			ErrorReason: ReasonStorage, Reason: err.err.Error()})
	}
	var names []string
	for i := range rows {
		if r.recordRegistration(rows[i], log) {
			names = append(names, rows[i].Table)
		}
	}
	a.mu.Lock()
	// A failed discovery is tried again next cycle.
	if len(errs) == 0 && ctx.Err() == nil {
		a.last = now
	}
	a.rows = names
	a.discovered = found
	a.seen = byName
	a.mu.Unlock()
	r.opts.Metrics.SetDiscovered(found)
	return rows
}

// recordRegistration records a register-phase row as the table's status,
// counts and logs it; it reports whether the row stays on the status page
// until the next discovery (everything but a registration, which the
// listing keeps).
func (r *Reconciler) recordRegistration(res Result, log *zap.Logger) (keep bool) {
	r.record(res)
	r.notify(context.Background(), res, nil)
	r.opts.Metrics.RecordRegistration(string(res.Outcome))
	switch res.Outcome {
	case OutcomeRegistered:
		log.Info("registered", zap.String("table", res.Table), zap.String("location", res.Registration.Location))
	case OutcomeFlagged, OutcomeFailed:
		log.Warn("not registered", zap.String("table", res.Table), zap.String("reason", res.Reason))
	case OutcomeAlreadyRegistered:
		log.Info("not registered", zap.String("table", res.Table), zap.String("reason", res.Reason))
	}
	return res.Outcome != OutcomeRegistered
}

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

// lockLocation serialises the decision and create of one location
// (canonical key) between a discovery and events; it returns the unlock.
func (a *registrar) lockLocation(key string) func() {
	a.mu.Lock()
	l := a.locks[key]
	if l == nil {
		l = make(chan struct{}, 1)
		a.locks[key] = l
	}
	a.mu.Unlock()
	l <- struct{}{}
	return func() { <-l }
}

// registeredSince reports whether this process registered the location
// after seq (a catalog view read at seq does not show it).
func (a *registrar) registeredSince(key string, seq uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registered[key] > seq
}

// markRegistered records that the location is registered now.
func (a *registrar) markRegistered(key, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	a.registered[key] = a.seq
	a.known[key] = true
	a.now[strings.ToLower(name)] = true
}

// listError is a template directory discovery could not list.
type listError struct {
	table string // the template's name, for the report
	err   error
}

// discoverUnregistered lists every template level by level and returns the
// directories at its full depth, in name order.
func (r *Reconciler) discoverUnregistered(ctx context.Context) ([]*candidate, []listError) {
	a := r.registrar
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
				err := deltalog.ListDirs(ctx, r.opts.Storage.openURL(n.loc), a.opts.ListPageSize, func(names []string) error {
					for _, name := range names {
						vals := make(map[string]string, len(n.vals)+1)
						for k, v := range n.vals {
							vals[k] = v
						}
						vals[s.v] = name
						next = append(next, node{loc: location.Location{Scheme: n.loc.Scheme, Bucket: n.loc.Bucket, Path: n.loc.Path + "/" + name}, vals: vals})
					}
					return nil
				}, r.logOptions...)
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
			if c := r.newCandidate(t, n.loc, n.vals); r.opts.Shard.Owns(c.name.String()) {
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

// newCandidate is the directory at loc a template describes with the
// variables' values vals: its name, or why it has none, and where it is
// opened (or why the storage policy refuses it).
func (r *Reconciler) newCandidate(t *regTemplate, loc location.Location, vals map[string]string) *candidate {
	c := &candidate{rule: t, loc: loc}
	c.name, c.err = t.nameFor(vals)
	if c.err != nil {
		c.name = catalog.TableName{Catalog: t.rule.Name, Schema: "", Table: loc.String()}
		c.err = flagged(ReasonConfig, fmt.Errorf("%s: no table name for it under %q: %w", loc, t.rule.Name, c.err))
	} else if l, u, err := r.opts.Storage.Resolve(loc.String()); err != nil {
		c.err = refused(err)
		if c.err == nil {
			c.err = flagged(ReasonLocation, err)
		}
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

func (r *Reconciler) catalogView(ctx context.Context, cands []*candidate) (*catalogView, error) {
	v := &catalogView{schemas: map[string]map[string]bool{}, byName: map[string]string{}, byLoc: map[string]string{}, listed: map[string]bool{}}
	r.registrar.mu.Lock()
	v.seq = r.registrar.seq
	r.registrar.mu.Unlock()
	var errs []error
	// What earlier cycles read: tables outside the listed schemas too.
	r.mu.Lock()
	for name, st := range r.tables {
		if st.loc != "" {
			v.byLoc[location.Canonical(st.loc)] = name
		}
	}
	r.mu.Unlock()
	for _, c := range cands {
		if c.err != nil {
			continue
		}
		cat := strings.ToLower(c.name.Catalog)
		if _, ok := v.schemas[cat]; !ok {
			m, err := r.kind.Schemas(ctx, c.name.Catalog)
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
		err := r.kind.Tables(ctx, c.name.Catalog, c.name.Schema, func(page []catalog.Listed) error {
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

// registerPlan decides, and unless a dry run acts, for every candidate; it
// returns the rows to report and how many tables discovery found (the
// directories holding a Delta log, registered or not). byName are the
// locations each (lower-cased) name is found at: two of them, and
// neither is registered. Discovery passes all it found; an event, its one
// candidate and what the last discovery found (register_events.go).
func (r *Reconciler) registerPlan(ctx context.Context, cands []*candidate, byName map[string][]string) ([]Result, int) {
	var rows []Result
	view, viewErr := r.catalogView(ctx, cands)
	found := 0
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		res, counted := r.registerOne(ctx, c, byName, view, viewErr)
		if counted {
			found++
		}
		if res != nil {
			rows = append(rows, *res)
		}
	}
	return rows, found
}

// registerOne decides, and unless a dry run acts, for one candidate: its row
// (nil: nothing to report, the table is recorded under its name or holds
// no commit yet) and whether it is a table (found).
func (r *Reconciler) registerOne(ctx context.Context, c *candidate, byName map[string][]string, view *catalogView, viewErr error) (*Result, bool) {
	a := r.registrar
	row := func() *Result {
		return &Result{Table: c.name.String(), Type: catalog.TableTypeExternal, Mode: ModeSync}
	}
	flag := func(err error) *Result {
		res := row()
		res.Type = ""
		*res = res.fail(err)
		return res
	}
	if c.err != nil {
		return flag(c.err), false
	}
	key := c.key()
	alreadyAt := func(other string) *Result {
		a.mu.Lock()
		a.known[key] = true
		a.mu.Unlock()
		if strings.EqualFold(other, c.name.String()) {
			// An adopted table: its events find it even before a
			// cycle's listing has reconciled it.
			r.opts.Dirty.track(Target{Name: c.name, Mode: r.registeredTargetMode(c.name)}, c.loc.String())
			return nil
		}
		res := row()
		res.Outcome, res.Status = OutcomeAlreadyRegistered, StatusSynced
		res.Reason = fmt.Sprintf("location %s is already registered as %s: not registered again", c.loc, other)
		return res
	}
	if other, ok := view.byLoc[key]; ok {
		return alreadyAt(other), true
	}
	if same := byName[strings.ToLower(c.name.String())]; len(same) > 1 {
		return flag(flagged(ReasonConflict, fmt.Errorf("name collision: %s all map to %s under register rule %q; none is registered",
			strings.Join(same, ", "), c.name, c.rule.rule.Name))), false
	}
	if at, ok := view.byName[strings.ToLower(c.name.String())]; ok {
		return flag(flagged(ReasonConflict, fmt.Errorf("%s already exists at %s: the table at %s is not registered (never overwritten)",
			c.name, textOr(at, "another location"), c.loc))), false
	}
	if viewErr != nil && !view.listed[strings.ToLower(c.name.Catalog+"."+c.name.Schema)] {
		res := row()
		*res = res.fail(failed(ReasonCatalog, fmt.Errorf("not registered: %w", viewErr)))
		return res, false
	}
	createSchema := false
	switch schemas := view.schemas[strings.ToLower(c.name.Catalog)]; {
	case schemas == nil:
		return flag(flagged(ReasonMissingSchema, fmt.Errorf("catalog %s does not exist: %s is not registered (catalogs are never created)", c.name.Catalog, c.loc))), false
	case !schemas[strings.ToLower(c.name.Schema)]:
		if !a.opts.CreateSchemas {
			return flag(flagged(ReasonMissingSchema, fmt.Errorf("schema %s.%s does not exist: %s is not registered (register.create_schemas creates it)",
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
	snap, err := r.loadUnregistered(ctx, c)
	if errors.Is(err, deltalog.ErrNotATable) {
		return nil, false // no commit yet: not a table (a later discovery or event finds it)
	}
	if err != nil {
		return flag(err), true
	}
	res := row()
	res.LogVersion = &snap.Version
	log := LogStateOf(snap, c.loc.String())
	w, err := r.kind.Registration(c.name, c.loc.String(), log)
	if err == nil && isCatalogManagedLog(snap) {
		err = errors.New("the log is catalog-managed (catalogManaged table feature): it is never registered as EXTERNAL")
	}
	if err != nil {
		return flag(flagged(ReasonUnsupported, fmt.Errorf("not registered: %w", err))), true
	}
	reg := registrationRow(&log)
	reg.CreateSchema = createSchema
	res.Registration = &reg
	if m, ok := r.opts.Selector.Match(c.name.Catalog, c.name.Schema, c.name.Table); ok && m == ModeWarn {
		// Creating the record is a write, and a rule the user wrote
		// for this name says never to write it: the row says what
		// would be created, and why it is not.
		res.Mode, res.Outcome, res.Status = ModeWarn, OutcomeFlagged, StatusOutOfSync
		res.Reason = fmt.Sprintf("not registered: a tables[] rule puts %s in mode warn, which never writes (register rule %q)", c.name, c.rule.rule.Name)
		a.mu.Lock()
		a.withheld[strings.ToLower(c.name.String())] = true
		a.mu.Unlock()
		return res, true
	}
	if r.opts.DryRun {
		res.Outcome, res.Status = OutcomeWouldRegister, StatusOutOfSync
		return res, true
	}
	a.mu.Lock()
	capped := a.opts.MaxPerCycle > 0 && a.created >= a.opts.MaxPerCycle
	if !capped {
		a.created++
	}
	a.mu.Unlock()
	if capped {
		res.Outcome, res.Status = OutcomeWouldRegister, StatusOutOfSync
		res.Reason = fmt.Sprintf("waits for the next cycle: register.max_per_cycle (%d) reached", a.opts.MaxPerCycle)
		return res, true
	}
	if createSchema {
		if err := r.kind.CreateSchema(ctx, c.name); err != nil {
			*res = res.fail(failed(ReasonCatalog, fmt.Errorf("creating schema %s.%s: %w", c.name.Catalog, c.name.Schema, err)))
			return res, true
		}
		view.setSchema(c.name)
	}
	version, err := r.register(ctx, w)
	var meanwhile *registeredMeanwhile
	switch {
	case errors.As(err, &meanwhile):
		// Another process (a second deltasync, an engine) created it at
		// this very location: it is there, and not a conflict.
		res.Outcome, res.Status, res.Registration = OutcomeAlreadyRegistered, StatusSynced, nil
		res.Reason = meanwhile.Error()
		a.mu.Lock()
		a.known[key] = true
		a.mu.Unlock()
		return res, true
	case err != nil:
		*res = res.fail(err)
		return res, true
	}
	res.Outcome, res.Status = OutcomeRegistered, StatusSynced
	res.CatalogVersion = version
	a.markRegistered(key, c.name.String())
	// Its commits' events find it from now on, before any cycle has
	// reconciled it.
	r.opts.Dirty.track(Target{Name: c.name, Mode: r.registeredTargetMode(c.name)}, c.loc.String())
	return res, true
}

// setSchema records that the schema of n exists now.
func (v *catalogView) setSchema(n catalog.TableName) {
	if m := v.schemas[strings.ToLower(n.Catalog)]; m != nil {
		m[strings.ToLower(n.Schema)] = true
	}
}

// registeredTargetMode is the mode a registered table is maintained in: a
// tables[] rule's that selects it, else sync.
func (r *Reconciler) registeredTargetMode(n catalog.TableName) Mode {
	if m, ok := r.opts.Selector.Match(n.Catalog, n.Schema, n.Table); ok {
		return m
	}
	return ModeSync
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

// loadUnregistered reads the candidate's log (one Load).
func (r *Reconciler) loadUnregistered(ctx context.Context, c *candidate) (*deltalog.Snapshot, error) {
	t, err := deltalog.Open(ctx, c.openURL, r.logOptions...)
	if err != nil {
		return nil, failed(ReasonStorage, err)
	}
	defer t.Close()
	snap, err := t.Load(ctx, deltalog.LoadOptions{})
	switch {
	case err == nil:
		return snap, nil
	case errors.Is(err, deltalog.ErrNotATable):
		return nil, err
	case isLogContentError(err):
		return nil, flagged(ReasonLog, fmt.Errorf("not registered: the log cannot be read: %w", err))
	}
	return nil, failed(ReasonStorage, err)
}

// isCatalogManagedLog reports whether the log's protocol names the
// catalogManaged feature (or its preview name).
func isCatalogManagedLog(s *deltalog.Snapshot) bool {
	for _, f := range slices.Concat(s.Protocol.ReaderFeatures, s.Protocol.WriterFeatures) {
		if f == "catalogManaged" || f == "catalogOwned-preview" {
			return true
		}
	}
	return false
}

// register sends a registration (the kind creates the record in sync
// with the log, or leaves none) and writes its audit record. A name
// taken meanwhile is read again: at the same location it is someone
// else's registration of this table, elsewhere a conflict.
func (r *Reconciler) register(ctx context.Context, w *catalog.Write) (*int64, error) {
	v, err := r.kind.Register(ctx, w)
	lv := w.LogVersion
	defer func() { r.auditSent(ctx, w, nil, &lv, catalog.Sent{}, err, nil, nil) }()
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, catalog.ErrUnsupported):
		return nil, flagged(ReasonUnsupported, fmt.Errorf("not registered: %w", err))
	case errors.Is(err, catalog.ErrRefused):
		return nil, flagged(ReasonRefused, fmt.Errorf("not registered: the catalog refused the create: %w", err))
	}
	if !errors.Is(err, catalog.ErrAlreadyExists) {
		return nil, failed(ReasonCatalog, err)
	}
	// Taken meanwhile: read what took it. At the same location it is
	// someone else's registration of this table, elsewhere a conflict.
	at := ""
	if read, rerr := r.kind.Load(ctx, w.Table, nil); rerr == nil {
		at = textOr(read.StorageLocation, read.Location)
	}
	if at != "" && location.Canonical(at) == location.Canonical(w.Location) {
		return nil, &registeredMeanwhile{name: w.Table, loc: w.Location}
	}
	return nil, flagged(ReasonConflict, fmt.Errorf("not registered: %s was created meanwhile at %s: %w", w.Table, textOr(at, "another location"), err))
}

// registrationRow is the plan row of a registration: the record it
// creates, as the log describes it.
func registrationRow(log *plan.LogState) Registration {
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

// orphaned is the problem of a record whose location holds no Delta log.
func orphaned(loc string, err error) error {
	return &problem{outcome: OutcomeOrphaned, reason: ReasonOrphaned,
		err: fmt.Errorf("orphaned: %s holds no Delta log; the record is never deleted, never written: %w", loc, err)}
}

// CheckRegisterOptions checks register rules against the storage policy
// as New does, without a catalog: each problem is a *TemplateError naming
// its rule (or an error for the options as a whole).
func CheckRegisterOptions(opts *RegisterOptions, policy *StoragePolicy) error {
	_, err := newRegistrar(opts, policy)
	return err
}

// Register creates the EXTERNAL table for the snapshot in k's catalog, in
// sync with the log (its watermark the snapshot's version), and returns
// the version the record holds.
func Register(ctx context.Context, k catalog.Kind, s *deltalog.Snapshot, name catalog.TableName, location string) (*int64, error) {
	w, err := k.Registration(name, location, LogStateOf(s, location))
	if err != nil {
		return nil, err
	}
	v, err := k.Register(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return v, nil
}
