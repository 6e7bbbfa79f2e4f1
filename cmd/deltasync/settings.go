package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/plan"
)

// settings is a configuration validated and constructed in one step
// (cli.settings): the typed values plan, once, run and the demo take. Each
// value that needs parsing (patterns, a schedule, URLs, a token file) is
// built here by the same code that checks it, so nothing parses the
// configuration again. The library options are filled with everything the
// configuration says; newApp and newDaemon add the parts that are not
// configuration (clients, logger, metrics, the dry-run choice).
type settings struct {
	// cfg is the effective configuration as given: check-config prints it,
	// and the table rules' labels name the user's own words.
	cfg config

	catalogURL string
	// catalog lacks Token, Observer and Retry.Sleep/OnWait (newApp).
	catalog uc.Options
	// hms is set when catalog.url is thrift://: a Hive Metastore
	// (hmssettings.go); catalog is then unused.
	hms *hmsSettings
	// glue is set when catalog.url is glue://: the AWS Glue Data Catalog
	// (gluesettings.go); catalog is then unused.
	glue *glueSettings
	// reconcile lacks Catalog, Logger, Metrics, DryRun, Dirty, the
	// storage gates and the memory pool (newApp).
	reconcile sync.Options
	// rules are the table rules one by one, each with a selector of its
	// own, for the reports of rules that selected nothing (emptyselection.go).
	rules []selectionRule
	// allowedLocations is the allow-list in force (the default when unset).
	allowedLocations []string
	limits           deltalog.StorageLimits
	// maxReadMiB is storage.max_read_mib (0: the default, see
	// maxReadBytes) and maxLoadMiB storage.max_load_mib: newReconciler
	// makes the process's log-read memory pool from them.
	maxReadMiB, maxLoadMiB int64
	// events lacks Metrics and Logger (newDaemon); no Sources: no events.
	events events.Options
	log    logSettings
	daemon daemonSettings
	// heartbeatURL is pinged after a good cycle that may write ("": none);
	// push, after once's cycle (URL "": none).
	heartbeatURL string
	push         pushConfig
	// audit is the audit trail's section, opened by the apps that write.
	audit auditConfig
	// notify is the notify section (notify.go); nil: no change events.
	notify *notifySettings
}

// selectionRule is one table rule: as written, and compiled alone.
type selectionRule struct {
	tableRule
	sel *sync.Selector
}

type logSettings struct {
	console bool // console encoding; otherwise JSON
	level   zapcore.Level
}

// daemonSettings are what only run uses: its schedule and HTTP server.
type daemonSettings struct {
	schedule     sync.Schedule
	scheduleSpec string // as written, for the log
	jitter       time.Duration
	listen       string
	httpToken    string // "": no guard
	maxCycle     time.Duration
}

// settings validates cfg and constructs what the commands take, in one
// step. Every problem is reported at once, each named by the config key it
// is about; a library's structured error is named here, where the key is
// known. A new section adds its build function to the list.
func (c *cli) settings(cfg config) (settings, error) {
	return c.settingsFor(cfg, selectFromConfig)
}

// selection says where a command's tables come from.
type selection bool

const (
	// selectFromConfig: the config's tables[] (or register) rules, which
	// must then be there.
	selectFromConfig selection = true
	// selectFromPlan: a saved plan names its tables (apply); tables[] rules
	// are optional and unused.
	selectFromPlan selection = false
)

// settingsFor is settings for a command whose tables come from sel.
func (c *cli) settingsFor(cfg config, sel selection) (settings, error) {
	s := settings{cfg: cfg}
	var p problems
	s.buildCatalog(&p, c.getenv)
	s.buildTables(&p, sel)
	s.buildCycle(&p)
	s.buildHTTP(&p)
	s.buildEvents(&p, c) // after buildCycle: sized by the reconcile options
	s.buildLog(&p)
	s.buildAudit(&p)
	s.buildStorage(&p)
	s.buildRegister(&p) // after buildStorage: templates are checked against its policy
	s.checkHMS(&p)
	s.checkGlue(&p)
	s.buildNotify(&p, c) // after buildCatalog: names the catalog
	return s, errors.Join(p...)
}

// problems collects a section's errors; add records one as fmt.Errorf.
type problems []error

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// addErr records err unless it is nil.
func (p *problems) addErr(err error) {
	if err != nil {
		*p = append(*p, err)
	}
}

// addNamed records each error joined in err, as name words it: a
// library's structured error in the config's keys.
func (p *problems) addNamed(err error, name func(error) error) {
	for _, e := range unjoin(err) {
		*p = append(*p, name(e))
	}
}

// unjoin returns the errors joined in err (none for nil).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	} else if err != nil {
		return []error{err}
	}
	return nil
}

// buildCatalog checks catalog: where it is and how deltasync signs in
// (getenv reads the environment given to deltasync, for token_env).
func (s *settings) buildCatalog(p *problems, getenv func(string) string) {
	cc := s.cfg.Catalog
	if s.buildGlue(p) || s.buildHMS(p) {
		return
	}
	if cc.URL == "" {
		p.add("catalog.url: required (e.g. https://uc.example.com/api/2.1/unity-catalog)")
	} else if u, err := url.Parse(cc.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add("catalog.url %q: want an http(s) URL", cc.URL)
	} else if !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/api/2.1/unity-catalog") {
		p.add("catalog.url %q: must end in /api/2.1/unity-catalog", cc.URL)
	}
	auth := 0
	if cc.TokenFile != "" {
		auth++
		p.addErr(checkSecretFile("catalog.token_file", cc.TokenFile))
	}
	if cc.TokenEnv != "" {
		auth++
		if strings.TrimSpace(getenv(cc.TokenEnv)) == "" {
			p.add("catalog.token_env: environment variable %s is unset or empty", cc.TokenEnv)
		}
	}
	if o := cc.OAuth; o != nil {
		auth++
		if o.ClientID == "" {
			p.add("catalog.oauth.client_id: required")
		}
		if o.ClientSecretFile == "" {
			p.add("catalog.oauth.client_secret_file: required")
		} else {
			p.addErr(checkSecretFile("catalog.oauth.client_secret_file", o.ClientSecretFile))
		}
		if u, err := url.Parse(o.TokenURL); o.TokenURL == "" || err != nil || u.Host == "" {
			p.add("catalog.oauth.token_url %q: want an http(s) URL", o.TokenURL)
		}
	}
	if auth > 1 {
		p.add("catalog: set at most one of token_file, token_env and oauth")
	}
	if cc.CAFile != "" {
		if _, err := os.Stat(cc.CAFile); err != nil {
			p.add("catalog.ca_file: %v", err)
		}
	}
	if cc.Timeout <= 0 {
		p.add("catalog.timeout: must be positive")
	}
	if cc.IdleTimeout <= 0 {
		p.add("catalog.idle_timeout: must be positive")
	}
	if cc.MaxListEntries <= 0 {
		p.add("catalog.max_list_entries: must be positive")
	}
	if cc.MaxRPS < 0 {
		p.add("catalog.max_rps %v: must not be negative (0: no limit)", cc.MaxRPS)
	}
	if cc.MaxRetryAfter <= 0 {
		p.add("catalog.max_retry_after: must be positive")
	}
	s.catalogURL = strings.TrimRight(cc.URL, "/")
	s.catalog = uc.Options{
		Version: version, Timeout: time.Duration(cc.Timeout),
		CAFile: cc.CAFile, InsecureSkipVerify: cc.InsecureSkipVerify,
		// every worker plus the lister may hold a connection
		IdleConnsPerHost: s.cfg.Concurrency + 2, MaxRPS: cc.MaxRPS,
		IdleTimeout: time.Duration(cc.IdleTimeout), MaxListEntries: cc.MaxListEntries,
		Retry: uc.RetryPolicy{MaxRetryAfter: time.Duration(cc.MaxRetryAfter)},
	}
}

// buildTables checks which tables are read, and how: resync_interval,
// tables, shard, ignore_properties, watermark_updates,
// ignore_field_metadata, credentials.
func (s *settings) buildTables(p *problems, from selection) {
	c := &s.cfg
	if c.ResyncInterval < 0 {
		p.add("resync_interval: must not be negative (0: every table fully re-read every cycle)")
	}
	if from == selectFromConfig && len(c.Tables) == 0 && c.Register.options() == nil {
		p.add("tables: at least one rule with an include pattern is required (or pass --include), or a register rule")
	}
	rules := make([]sync.Rule, 0, len(c.Tables))
	for i, t := range c.Tables {
		if len(t.Include) == 0 { // it would select nothing, silently
			p.add("tables[%d].include: required (catalog.schema.table globs, e.g. main.sales.*)", i)
		}
		rules = append(rules, sync.Rule{Include: t.Include, Exclude: t.Exclude, Mode: sync.Mode(t.Mode), OnDestructive: sync.OnDestructive(t.OnDestructive)})
	}
	sel, err := sync.NewSelector(rules)
	p.addNamed(err, tablesKey)
	s.rules = nil
	for _, t := range c.Tables {
		// a rule that does not compile was reported above; it has no label
		if one, err := sync.NewSelector([]sync.Rule{{Include: t.Include, Exclude: t.Exclude}}); err == nil {
			s.rules = append(s.rules, selectionRule{tableRule: t, sel: one})
		} else {
			s.rules = append(s.rules, selectionRule{tableRule: t})
		}
	}
	shard, err := sync.ParseShard(c.Shard)
	p.addErr(err)
	for _, g := range c.IgnoreProperties {
		if _, err := path.Match(g, ""); err != nil {
			p.add("ignore_properties %q: %v", g, err)
		}
	}
	watermarks, err := sync.ParseWatermarkUpdates(c.WatermarkUpdates)
	if err != nil {
		p.add("watermark_updates %v", err)
	}
	for _, g := range c.IgnoreFieldMetadata {
		if _, err := path.Match(g, ""); err != nil {
			p.add("ignore_field_metadata %q: %v", g, err)
		}
	}
	if c.Credentials != "vended" && c.Credentials != "ambient" {
		p.add("credentials %q: want vended or ambient", c.Credentials)
	}
	r := &s.reconcile
	r.Selector, r.Shard, r.WatermarkUpdates = sel, shard, watermarks
	r.VendedCredentials = c.Credentials == "vended"
	r.Diff = plan.DiffOptions{IgnoreProperties: c.IgnoreProperties, IgnoreFieldMetadata: c.IgnoreFieldMetadata}
	r.ResyncInterval = time.Duration(c.ResyncInterval)
}

// tablesKey names a rule NewSelector refused by its config key
// (tables[i], tables[i].include, tables[i].exclude); other errors pass.
func tablesKey(e error) error {
	var re *sync.RuleError
	if !errors.As(e, &re) {
		return e
	}
	key := fmt.Sprintf("tables[%d]", re.Rule)
	if re.Field != "" {
		key += "." + strings.ToLower(re.Field)
	}
	return fmt.Errorf("%s: %w", key, re.Err)
}

// buildCycle checks when and how hard the daemon works: schedule,
// jitter, concurrency, backoff, max_cycle_duration.
func (s *settings) buildCycle(p *problems) {
	c := &s.cfg
	sched, err := sync.ParseSchedule(c.Schedule)
	p.addErr(err)
	if c.MaxCycleDuration < 0 {
		p.add("max_cycle_duration: must not be negative (0: /readyz never fails for a long cycle)")
	}
	if c.Jitter < 0 {
		p.add("jitter: must not be negative")
	}
	if c.Concurrency < 1 {
		p.add("concurrency %d: must be at least 1", c.Concurrency)
	}
	if c.ReadConcurrency < 0 {
		p.add("read_concurrency %d: must not be negative (0: the default, %d)", c.ReadConcurrency, sync.DefaultReadConcurrency)
	}
	if c.Backoff.Initial <= 0 || c.Backoff.Max < c.Backoff.Initial {
		p.add("backoff: want 0 < initial <= max, got initial %s max %s",
			time.Duration(c.Backoff.Initial), time.Duration(c.Backoff.Max))
	}
	s.reconcile.Concurrency = c.Concurrency
	s.reconcile.ReadConcurrency = c.ReadConcurrency
	s.reconcile.Backoff = sync.Backoff{Initial: time.Duration(c.Backoff.Initial), Max: time.Duration(c.Backoff.Max)}
	s.daemon.schedule, s.daemon.scheduleSpec = sched, c.Schedule
	s.daemon.jitter = time.Duration(c.Jitter)
	s.daemon.maxCycle = time.Duration(c.MaxCycleDuration)
}

// buildHTTP checks what the daemon serves and calls: listen, http,
// heartbeat_url, pushgateway.
func (s *settings) buildHTTP(p *problems) {
	c := &s.cfg
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p.add("listen %q: %v", c.Listen, err)
	}
	token, err := readGuardToken(c.HTTP.TokenFile)
	if err != nil {
		p.add("%v", err)
	}
	for _, u := range []struct{ key, v string }{{"heartbeat_url", c.HeartbeatURL}, {"pushgateway.url", c.Pushgateway.URL}} {
		if u.v == "" {
			continue
		}
		if pu, err := url.Parse(u.v); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			p.add("%s %q: want an http(s) URL", u.key, redactURL(u.v))
		}
	}
	if c.Pushgateway.URL != "" && c.Pushgateway.Job == "" {
		p.add("pushgateway.job: required with pushgateway.url")
	}
	s.daemon.listen, s.daemon.httpToken = c.Listen, token
	s.heartbeatURL, s.push = c.HeartbeatURL, c.Pushgateway
}

// buildLog checks log.
func (s *settings) buildLog(p *problems) {
	l := s.cfg.Log
	if l.Format != "json" && l.Format != "console" {
		p.add("log.format %q: want json or console", l.Format)
	}
	level, err := zapcore.ParseLevel(l.Level)
	if err != nil {
		p.add("log.level %q: want debug, info, warn or error", l.Level)
		level = zapcore.InfoLevel
	}
	s.log = logSettings{console: l.Format == "console", level: level}
}

// buildStorage checks storage: which locations may be read, how each
// bucket is opened, and the memory and request bounds of log reads.
func (s *settings) buildStorage(p *problems) {
	st := s.cfg.Storage
	var buckets []sync.BucketOptions
	for _, b := range st.Buckets {
		buckets = append(buckets, sync.BucketOptions{Location: b.Location, Options: b.Options})
	}
	policy, err := sync.NewStoragePolicy(st.AllowedLocations, buckets)
	p.addNamed(err, storageKey)
	if st.MaxLoadMiB <= 0 {
		p.add("storage.max_load_mib %d: must be positive", st.MaxLoadMiB)
	}
	switch {
	case st.MaxReadMiB < 0:
		p.add("storage.max_read_mib %d: must be positive (0 or unset: the default, min(%d, half the container's memory limit))", st.MaxReadMiB, defaultMaxReadMiB)
	case st.MaxReadMiB > 0 && st.MaxReadMiB < st.MaxLoadMiB:
		p.add("storage.max_read_mib %d: must be at least storage.max_load_mib (%d): every log read must fit in what all of them share", st.MaxReadMiB, st.MaxLoadMiB)
	}
	if st.MaxInFlight <= 0 {
		p.add("storage.max_in_flight %d: must be positive", st.MaxInFlight)
	}
	if n := st.MaxInFlightPerBucket; n <= 0 || n > st.MaxInFlight {
		p.add("storage.max_in_flight_per_bucket %d: must be positive and at most storage.max_in_flight (%d)", n, st.MaxInFlight)
	}
	s.reconcile.Storage = policy
	s.reconcile.LogOptions = []deltalog.Option{deltalog.WithMaxLoadBytes(st.MaxLoadMiB << 20)}
	s.limits = deltalog.StorageLimits{MaxInFlight: st.MaxInFlight, MaxInFlightPerBucket: st.MaxInFlightPerBucket}
	s.maxReadMiB, s.maxLoadMiB = st.MaxReadMiB, st.MaxLoadMiB
	s.allowedLocations = st.AllowedLocations
	if len(s.allowedLocations) == 0 {
		s.allowedLocations = sync.DefaultAllowedLocations
	}
}

// storageKey names an entry NewStoragePolicy refused by its config key
// (storage.allowed_locations, storage.buckets[i].location,
// storage.buckets[i].options.NAME); other errors pass.
func storageKey(e error) error {
	var pe *sync.PolicyError
	switch {
	case !errors.As(e, &pe):
		return e
	case !pe.Bucket:
		return fmt.Errorf("storage.allowed_locations %q: %w", pe.Value, pe.Err)
	case pe.Option != "":
		return fmt.Errorf("storage.buckets[%d].options.%s: %w", pe.Index, pe.Option, pe.Err)
	}
	return fmt.Errorf("storage.buckets[%d].location %q: %w", pe.Index, pe.Value, pe.Err)
}
