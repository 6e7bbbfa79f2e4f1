// Package register creates the catalog record of a Delta table found in
// storage under a location template, as an EXTERNAL table carrying exactly
// what the log says; the reconcile maintains it afterwards like any table
// a tables[] rule in mode sync selects. It never overwrites and never
// guesses: a name taken at another location, two directories mapping to
// one name, a missing schema, a catalog-managed or refused log are
// flagged, and nothing is created.
//
// Discovery (Registrar.Discover) lists only what the templates describe:
// one delimiter LIST per template level, paginated. A directory whose
// location the catalog already records costs nothing more; a new one is
// read with one Load (deltalog.ErrNotATable: not a table yet). It runs on
// its own interval (Options.Interval); a fresh process discovers on its
// first run. A storage event under a template registers its table at once
// (Registrar.Candidate, Registrar.At) with discovery's decision for that
// one directory.
//
// The package decides and creates through a catalog.Kind and reads
// storage through its Host (package sync): the storage policy, the log,
// the shard, the tables[] rules and the audit trail are the host's. Its
// rows are reported by the host in the reconcile's words; a Row's error
// is a *Problem, or the host's own classification passed through.
package register

import (
	"context"
	"errors"
	"slices"
	"strings"
	stdsync "sync"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/sync/location"
)

// Options configures the registration of tables found in storage.
type Options struct {
	Rules []Rule
	// Interval is how often discovery re-lists the templates (0: every
	// cycle). The first cycle always discovers.
	Interval time.Duration
	// MaxPerCycle bounds the tables created in one cycle (0: no bound);
	// the others are reported as waiting (WouldRegister).
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

// Host is what registration reads and reports through (package sync).
type Host interface {
	// Resolve checks a location against the storage policy: the
	// normalised location and the URL to open it at, or why it is
	// refused (an error wrapping ErrOutsideAllowed when it lies outside
	// the allow-list).
	Resolve(loc string) (location.Location, string, error)
	// ListDirs lists the directories under loc, a location under a
	// template's checked root, page by page.
	ListDirs(ctx context.Context, loc location.Location, pageSize int, page func(names []string) error) error
	// Load reads the log at openURL (one Load): deltalog.ErrNotATable
	// when it holds no commit yet, else a classified error.
	Load(ctx context.Context, openURL, loc string) (catalog.LogState, error)
	// Owns reports whether this shard registers the table name.
	Owns(name string) bool
	// Recorded are the canonical locations earlier reads found recorded,
	// each with its table's name.
	Recorded() map[string]string
	// Warn reports whether a tables[] rule puts the name in mode warn
	// (never written, so never created).
	Warn(n catalog.TableName) bool
	// DryRun reports whether nothing is created, only reported.
	DryRun() bool
	// Now is the time discovery is due against.
	Now() time.Time
	// Track makes a table just registered (or found recorded under its
	// own name) known to the source of work, so its events find it.
	Track(n catalog.TableName, loc string)
	// Audit records a create sent (err its answer).
	Audit(ctx context.Context, w *catalog.Write, err error)
}

// ErrOutsideAllowed is a location outside the storage policy's
// allow-list (Host.Resolve wraps it).
var ErrOutsideAllowed = errors.New("outside storage.allowed_locations")

// Outcome is what registration did for one table found in storage.
type Outcome string

// The outcomes of registering a table found in storage.
const (
	// Registered: the table was created, as EXTERNAL, in sync with its
	// log.
	Registered Outcome = "registered"
	// WouldRegister: a dry run found a table a run would register, or a
	// run reached Options.MaxPerCycle and it waits.
	WouldRegister Outcome = "would_register"
	// AlreadyRegistered: the table's location is recorded under another
	// name (or was registered meanwhile by another process); nothing is
	// created (Row.Reason names it).
	AlreadyRegistered Outcome = "already_registered"
	// Withheld: a tables[] rule puts the name in mode warn, which never
	// writes; the row says what would be created.
	Withheld Outcome = "withheld"
)

// The reasons a table is not registered (counted like the reconcile's).
const (
	// ReasonMissingSchema: the catalog or schema a rule names does not
	// exist (a schema is created only with Options.CreateSchemas).
	ReasonMissingSchema = "missing_schema"
	reasonConfig        = "config"
	reasonConflict      = "conflict"
	reasonCatalog       = "catalog"
	reasonStorage       = "storage"
	reasonUnsupported   = "unsupported"
	reasonRefused       = "refused"
)

// Problem is why a table found in storage is not registered: flagged
// (reported; retrying soon would not help) or failed (tried again), and
// the reason it is counted under.
type Problem struct {
	Flagged bool
	Reason  string
	Err     error
}

func (p *Problem) Error() string { return p.Err.Error() }
func (p *Problem) Unwrap() error { return p.Err }

func flag(reason string, err error) error { return &Problem{Flagged: true, Reason: reason, Err: err} }
func fail(reason string, err error) error { return &Problem{Reason: reason, Err: err} }

// Row is what registration decided for one table found in storage (or
// one template discovery could not list).
type Row struct {
	// Table is the table's name; for a listing error, the rule's name
	// template; for a directory with no name, rule name and location.
	Table string
	// External is set when Table names an EXTERNAL table the row is
	// about (not a directory that makes no name).
	External bool
	// Outcome is what was done; "" when Err says why nothing was.
	Outcome Outcome
	Reason  string
	Err     error
	// LogVersion is the version of the log read; CatalogVersion the
	// version the created record holds.
	LogVersion, CatalogVersion *int64
	Registration               *Registration
}

// Registrar is what registration keeps between cycles.
type Registrar struct {
	opts  Options
	rules []*template
	kind  catalog.Kind
	host  Host

	mu   stdsync.Mutex
	last time.Time // last discovery
	// known are the canonical locations discovery need not read again:
	// recorded in the catalog (at the template's name or another).
	known map[string]bool
	// kept are the names of the last discovery's rows that stay on the
	// status page until the next discovery (flagged, waiting).
	kept []string
	// now are the tables registered in the running cycle (the listing
	// that follows does not reconcile them again).
	now map[string]bool
	// withheld are the names a tables[] rule in mode warn keeps from
	// being registered (lower-cased): no record has them, and the
	// listing does not load them as missing while the register phase
	// reports them.
	withheld map[string]bool
	// seen are the locations the last discovery found under each name
	// (lower-cased): an event's candidate collides with them as a
	// discovered directory does (events.go).
	seen map[string][]string
	// created counts the tables created in the running cycle, by
	// discovery and by events together (Options.MaxPerCycle).
	created int
	// locks serialise the decision and create of one location between
	// discovery and events; registered is the seq of each location's
	// last registration by this process (seq counts them), so a decision
	// taken on a catalog view read before it knows it is stale.
	locks      map[string]chan struct{}
	seq        uint64
	registered map[string]uint64
}

// New compiles the rules (each problem a *TemplateError naming its rule,
// or an error for the options as a whole) and returns the registrar; nil
// without rules. Compiling checks each template against host.Resolve
// only, so Check passes a host that has nothing else.
func New(opts *Options, kind catalog.Kind, host Host) (*Registrar, error) {
	if opts == nil || len(opts.Rules) == 0 {
		return nil, nil
	}
	a := &Registrar{opts: *opts, kind: kind, host: host, known: map[string]bool{}, now: map[string]bool{}, withheld: map[string]bool{},
		locks: map[string]chan struct{}{}, registered: map[string]uint64{}}
	var errs []error
	for i, rule := range opts.Rules {
		t, err := compile(i, rule, host)
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

// Describes reports whether a listed table is one a rule describes (its
// name is what its location maps to): such a table is maintained in mode
// sync when no tables[] rule selects it.
func (a *Registrar) Describes(n catalog.TableName, loc string) bool {
	if a == nil || loc == "" {
		return false
	}
	l, err := location.Parse(loc)
	if err != nil {
		return false
	}
	for _, t := range a.rules {
		vals, ok := t.match(l)
		if !ok {
			continue
		}
		if want, err := t.nameFor(vals); err == nil && strings.EqualFold(want.String(), n.String()) {
			return true
		}
	}
	return false
}

// Catalogs are the catalogs the templates name literally; all is set when
// one is a variable.
func (a *Registrar) Catalogs() (names []string, all bool) {
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

// MayMatchSchema reports whether a template can name a table in c.s.
func (a *Registrar) MayMatchSchema(c, s string) bool {
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

// Busy reports whether the running cycle registered the table, or
// whether a warn rule withholds it from registration (the register phase
// reports it): either way the cycle's listing does not reconcile it.
func (a *Registrar) Busy(name string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now[strings.ToLower(name)] || a.withheld[strings.ToLower(name)]
}

// Kept are the names whose rows stay on the status page while no
// discovery runs.
func (a *Registrar) Kept() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.kept)
}

// Keep sets the names of the last discovery's rows that stay (Kept).
func (a *Registrar) Keep(names []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kept = names
}

// keepAlso adds one name to Kept (an event's row).
func (a *Registrar) keepAlso(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.Contains(a.kept, name) {
		a.kept = append(a.kept, name)
	}
}

// lockLocation serialises the decision and create of one location
// (canonical key) between a discovery and events; it returns the unlock.
func (a *Registrar) lockLocation(key string) func() {
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
func (a *Registrar) registeredSince(key string, seq uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registered[key] > seq
}

// markRegistered records that the location is registered now.
func (a *Registrar) markRegistered(key, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	a.registered[key] = a.seq
	a.known[key] = true
	a.now[strings.ToLower(name)] = true
}

// markKnown records that the location is recorded in the catalog.
func (a *Registrar) markKnown(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.known[key] = true
}
