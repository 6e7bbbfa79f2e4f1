package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/glue"
	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/metrics"
	"github.com/deltasync/deltasync/sync/notify"
)

// syncFlags are the flags shared by plan, once, run and check-config. Each
// flag can also come from DELTASYNC_<NAME> (dashes as underscores; repeated
// flags comma-separated), and overrides the config file.
type syncFlags struct {
	configFile     string
	catalogURL     string
	tokenFile      string
	include        []string
	exclude        []string
	mode           string
	output         string
	shard          string
	listen         string
	schedule       string
	logFormat      string
	logLevel       string
	credentials    string
	concurrency    int
	heartbeatURL   string
	pushgatewayURL string
	httpTokenFile  string
	allowEmpty     bool
	allowLocations []string
	timeout        time.Duration
	maxCycle       time.Duration
	eventsURL      []string
	onDestructive  string
	auditFile      string
	out            string
	// fromPlan: the command's tables come from a saved plan (apply), so
	// the config need not select any.
	fromPlan bool
}

// addSyncFlags registers the flags every config-reading command shares
// (config, catalog, selection, logging) plus the named extras that command
// uses (output, allow-empty, listen, schedule, http-token-file,
// heartbeat-url, pushgateway-url), so each command's help lists only flags
// it acts on.
func addSyncFlags(cmd *cobra.Command, f *syncFlags, extras ...string) {
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "YAML config file (strict: unknown keys are errors)")
	fs.StringVar(&f.catalogURL, "catalog-url", "", "Unity Catalog base URL, ending in /api/2.1/unity-catalog, a Hive Metastore thrift://host:9083, or AWS Glue glue://REGION")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the catalog bearer token")
	fs.StringArrayVar(&f.include, "include", nil, "catalog.schema.table glob to select (repeatable; replaces the config's tables)")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "catalog.schema.table glob to leave out (repeatable)")
	fs.StringVar(&f.mode, "mode", "", "sync or warn, for every selected table")
	fs.StringVar(&f.shard, "shard", "", "only tables of shard i/N (0 <= i < N), by FNV-1a of the full name")
	fs.StringVar(&f.logFormat, "log-format", "", "json or console")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error")
	fs.StringVar(&f.credentials, "credentials", "", "vended (catalog READ credentials) or ambient (process credentials)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "tables reconciled at once")
	fs.StringVar(&f.onDestructive, "on-destructive", "", "sync or hold: what a sync does with a destructive change (a column dropped or renamed, ...), for every selected table")
	for _, name := range extras {
		switch name {
		case "output":
			fs.StringVarP(&f.output, "output", "o", "text", "report format: text, json, or markdown (for a pull request comment)")
		case "allow-empty":
			fs.BoolVar(&f.allowEmpty, "allow-empty", false, "exit 0 when the table rules select no table (default: exit 1, so a typo'd --include fails)")
		case "listen":
			fs.StringVar(&f.listen, "listen", "", "HTTP listen address for /metrics, /healthz, /readyz and the status page")
		case "schedule":
			fs.StringVar(&f.schedule, "schedule", "", `cycle schedule: "@every 1m" or a cron expression`)
		case "http-token-file":
			fs.StringVar(&f.httpTokenFile, "http-token-file", "", "file holding the bearer token required on /metrics and / (/healthz and /readyz stay open)")
		case "heartbeat-url":
			fs.StringVar(&f.heartbeatURL, "heartbeat-url", "", "URL pinged (GET) after every successful cycle")
		case "max-cycle-duration":
			fs.DurationVar(&f.maxCycle, "max-cycle-duration", 0, "/readyz answers 503 while a cycle runs longer than this (0: never; default 30m from the config)")
		case "timeout":
			fs.DurationVar(&f.timeout, "timeout", 0, "overall deadline of the command (0: none); tables not reached in time are left for the next run")
		case "events-url":
			fs.StringArrayVar(&f.eventsURL, "events-url", nil, "pubsub subscription URL of storage notifications (repeatable; replaces the config's events.subscriptions)")
		case "audit-file":
			fs.StringVar(&f.auditFile, "audit-file", "", `JSON-lines file every catalog write (and every write refused or held) is appended to, fsynced; "-" for stderr`)
		case "out":
			fs.StringVar(&f.out, "out", "", "also write the plan, with each table's exact guarded update, to this file for deltasync apply")
		case "pushgateway-url":
			fs.StringVar(&f.pushgatewayURL, "pushgateway-url", "", "Pushgateway to push metrics to after the cycle")
		default:
			panic("addSyncFlags: unknown flag " + name)
		}
	}
	fs.StringArrayVar(&f.allowLocations, "allow-location", nil, "storage location glob tables may live under, e.g. s3://lake/warehouse/** or file:///data/** (repeatable; replaces storage.allowed_locations)")
}

// envName is the environment variable for a flag: DELTASYNC_CATALOG_URL.
func envName(flag string) string {
	return "DELTASYNC_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// loadConfig reads the effective configuration (defaults < file < env <
// flags) and builds its settings: the one place a command's configuration
// is read and checked. Every problem is reported at once, each named where
// the user wrote it (a file's key, a flag, an environment variable).
func (c *cli) loadConfig(cmd *cobra.Command, f *syncFlags) (settings, error) {
	fs := cmd.Flags()
	fromEnv, errs := c.flagsFromEnv(fs)
	cfg := defaultConfig()
	unreadable := false // the file could not be read or parsed: validating defaults adds only noise
	if f.configFile != "" {
		data, err := os.ReadFile(f.configFile)
		if err != nil {
			unreadable = true
			errs = append(errs, fmt.Errorf("config: %w", err))
		} else if err := parseConfigFile(data, c.env, &cfg); err != nil {
			unreadable = errors.Is(err, errConfigSyntax)
			errs = append(errs, inFile(f.configFile, err))
		}
	}
	changed := fs.Changed
	if changed("mode") && f.mode != "sync" && f.mode != "warn" {
		errs = append(errs, fmt.Errorf("%s %q: want sync or warn", flagOrEnv("mode", fromEnv), f.mode))
		f.mode = "" // reported once, as what the user typed, not again as tables[i].mode
	}
	if changed("catalog-url") {
		cfg.Catalog.URL = f.catalogURL
	}
	if changed("token-file") {
		cfg.Catalog.TokenFile, cfg.Catalog.TokenEnv, cfg.Catalog.OAuth = f.tokenFile, "", nil
	}
	switch {
	case changed("include"):
		cfg.Tables = []tableRule{{Include: f.include, Exclude: f.exclude, Mode: f.mode, OnDestructive: f.onDestructive}}
	default:
		for i := range cfg.Tables {
			if changed("exclude") {
				cfg.Tables[i].Exclude = append(cfg.Tables[i].Exclude, f.exclude...)
			}
			if changed("mode") && f.mode != "" {
				cfg.Tables[i].Mode = f.mode
			}
			if changed("on-destructive") {
				cfg.Tables[i].OnDestructive = f.onDestructive
			}
		}
	}
	set := func(flag string, dst *string, v string) {
		if changed(flag) {
			*dst = v
		}
	}
	set("shard", &cfg.Shard, f.shard)
	set("listen", &cfg.Listen, f.listen)
	set("schedule", &cfg.Schedule, f.schedule)
	set("log-format", &cfg.Log.Format, f.logFormat)
	set("log-level", &cfg.Log.Level, f.logLevel)
	set("credentials", &cfg.Credentials, f.credentials)
	set("heartbeat-url", &cfg.HeartbeatURL, f.heartbeatURL)
	set("http-token-file", &cfg.HTTP.TokenFile, f.httpTokenFile)
	set("pushgateway-url", &cfg.Pushgateway.URL, f.pushgatewayURL)
	if changed("max-cycle-duration") {
		cfg.MaxCycleDuration = duration(f.maxCycle)
	}
	if changed("concurrency") {
		cfg.Concurrency = f.concurrency
	}
	if changed("events-url") {
		cfg.Events = cfg.Events.withSubscriptions(f.eventsURL)
	}
	if changed("audit-file") {
		cfg.Audit.File = f.auditFile
	}
	if changed("allow-location") {
		cfg.Storage.AllowedLocations = f.allowLocations
	}
	if fs.Lookup("output") != nil && !slices.Contains(reportFormats, f.output) {
		errs = append(errs, fmt.Errorf("-o %q: want text, json or markdown", f.output))
	}
	if unreadable {
		return settings{cfg: cfg}, errors.Join(errs...)
	}
	from := selectFromConfig
	if f.fromPlan {
		from = selectFromPlan
	}
	s, err := c.settingsFor(cfg, from)
	if err != nil {
		errs = append(errs, nameSources(err, changed, fromEnv))
	}
	return s, errors.Join(errs...)
}

// flagsFromEnv sets every flag of fs not given on the command line from
// DELTASYNC_<NAME> (a repeatable flag takes a comma-separated list) and
// reports which flags it set. help is no setting.
func (c *cli) flagsFromEnv(fs *pflag.FlagSet) (fromEnv map[string]bool, errs []error) {
	fromEnv = map[string]bool{}
	fs.VisitAll(func(fl *pflag.Flag) {
		v, ok := c.env[envName(fl.Name)]
		if fl.Name == "help" || fl.Changed || !ok {
			return
		}
		vals := []string{v}
		if _, repeatable := fl.Value.(pflag.SliceValue); repeatable {
			vals = strings.Split(v, ",")
		}
		for _, v := range vals {
			if err := fs.Set(fl.Name, strings.TrimSpace(v)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(fl.Name), err))
			}
		}
		fromEnv[fl.Name] = true
	})
	return fromEnv, errs
}

// newLogger builds the zap logger the settings ask for, writing to w.
func newLogger(l logSettings, w io.Writer) *zap.Logger {
	var enc zapcore.Encoder
	if l.console {
		enc = zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	} else {
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(ec)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), l.level))
}

// app is everything a command needs, wired from its settings.
type app struct {
	s        settings
	log      *zap.Logger
	registry *prometheus.Registry
	metrics  *metrics.Metrics
	client   *uc.Client
	// metastore is the Hive Metastore client (catalog.url thrift://);
	// client is nil then.
	metastore *hms.Client
	// glue is the Glue client (catalog.url glue://); client is nil then.
	glue *glue.Client
	// kind is the catalog's kind over client or metastore: what the
	// reconciler and apply talk to, chosen once here from catalog.url.
	kind   catalog.Kind
	rec    *sync.Reconciler
	events *events.Events // run's storage events (newDaemon); nil without events.subscriptions
	audit  *audit.Writer  // nil without an audit trail, and for plan
	// notify sends change events (notify.go); nil without a notify
	// section, and for plan.
	notify        *notify.Dispatcher
	notifyRelease []func()

	// readPool is the memory pool every log read of the process shares
	// (storage.max_read_mib), made by newReconciler.
	readPool *deltalog.MemoryPool
	// gates are the storage limits and per-bucket throttling every table
	// of the process shares, made by newReconciler.
	gates *deltalog.StorageGates
}

// closeCatalog closes the metastore client's pooled connections (a Unity
// Catalog client holds none of its own to close): a command that ends
// leaves no connection for the metastore to wait on.
func (a *app) closeCatalog() {
	if a.metastore != nil {
		_ = a.metastore.Close()
	}
}

// catalogURL is the catalog's URL as configured: the Unity Catalog
// client's base URL, or the metastore's thrift:// URL.
func (a *app) catalogURL() string {
	switch {
	case a.metastore != nil:
		return a.s.hms.url
	case a.glue != nil:
		return a.s.glue.url
	}
	return a.client.BaseURL()
}

// writes says whether a command's cycles may write to the catalog.
type writes bool

const (
	dryRun       writes = false // plan: drift is reported, never written
	writeChanges writes = true  // once, run: sync-mode tables are written
)

// newApp wires the catalog client, metrics and reconciler of a command
// that runs cycles on its own (plan, once, apply, the demo): no source of
// work but the cycle. command names it in the audit trail, which only a
// command that writes opens.
func (c *cli) newApp(s settings, w writes, command string) (*app, error) {
	a, err := c.newParts(s)
	if err != nil {
		return nil, err
	}
	if err := a.newReconciler(c, w, command, nil); err != nil {
		a.closeCatalog()
		return nil, err
	}
	return a, nil
}

// newDaemon wires run's app: newApp's, and the storage events configured
// (events.subscriptions), which fill the reconciler's Dirty between cycles.
func (c *cli) newDaemon(s settings) (*app, error) {
	a, err := c.newParts(s)
	if err != nil {
		return nil, err
	}
	if a.events, err = newEvents(s, a); err != nil {
		a.closeCatalog()
		return nil, err
	}
	if err := a.newReconciler(c, writeChanges, "run", a.events.Dirty()); err != nil {
		a.closeCatalog()
		return nil, err
	}
	return a, nil
}

// newParts wires what every app has before its reconciler: logger,
// metrics and the catalog client.
func (c *cli) newParts(s settings) (*app, error) {
	a := &app{s: s, registry: prometheus.NewRegistry()}
	a.log = newLogger(s.log, c.stderr)
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = metrics.New(a.registry, version)
	tok, err := c.tokenSource(s.cfg.Catalog)
	if err != nil {
		return nil, err
	}
	if s.hms != nil {
		if a.metastore, err = s.hms.client(a.metrics); err != nil {
			return nil, err
		}
		a.kind = s.hms.kind(a.metastore, s.reconcile.Diff.IgnoreProperties)
		return a, nil
	}
	if s.glue != nil {
		if a.glue, err = s.glue.client(context.Background(), a.metrics); err != nil {
			return nil, err
		}
		a.kind = s.glue.kind(a.glue, s.reconcile.Diff.IgnoreProperties)
		return a, nil
	}
	opts := s.catalog
	opts.Token, opts.Observer = tok, a.metrics.ObserveCatalog
	opts.Retry = retryPolicy(opts.Retry, a.log, a.metrics)
	if a.client, err = uc.New(s.catalogURL, opts); err != nil {
		return nil, err
	}
	a.kind = uc.NewKind(a.client, uc.KindOptions{OnReadOnly: func(_ context.Context, cat string, err error) {
		a.log.Warn("catalog has no Delta API: read-only, drift is flagged, never written", zap.String("catalog", cat), zap.Error(err))
	}})
	return a, nil
}

// newReconciler completes the settings' reconcile options with a's parts,
// fresh storage gates, the audit trail (when w writes), and dirty (nil: no
// source of work but the cycle).
func (a *app) newReconciler(c *cli, w writes, command string, dirty *sync.Dirty) error {
	gates, err := deltalog.NewStorageGates(a.s.limits)
	if err != nil {
		return err
	}
	a.gates = gates
	a.metrics.ObserveStorageGates(gates) // per-bucket throttling
	if w == writeChanges {
		if a.audit, err = a.s.audit.open(c.stderr); err != nil {
			return err
		}
	}
	opts := a.s.reconcile
	opts.Catalog, opts.Logger, opts.Metrics = a.kind, a.log, a.metrics
	// One pool for every Table the reconciler opens (full reconciles,
	// refreshes, the tables events name, registration): the process's bound
	// on the log bytes held at once.
	a.readPool = a.newReadPool()
	opts.LogOptions = append(slices.Clip(opts.LogOptions), deltalog.WithStorageGates(gates), deltalog.WithMemoryPool(a.readPool))
	opts.DryRun, opts.Dirty = w == dryRun, dirty
	opts.Audit = change.AuditOptions{Writer: a.audit, Command: command, Version: version}
	if w == writeChanges {
		if a.notify, err = a.newNotify(context.Background()); err != nil {
			return err
		}
		if a.notify != nil {
			opts.Notifier = a.notify
		}
	}
	a.rec, err = sync.New(opts)
	return err
}

// newReadPool makes the memory pool all log reads share (see
// maxReadBytes), exports it as metrics and logs its limit.
func (a *app) newReadPool() *deltalog.MemoryPool {
	container, known := cgroupMemoryLimit(cgroupRoot)
	limit := maxReadBytes(a.s.maxReadMiB, a.s.maxLoadMiB, container, known)
	pool := deltalog.NewMemoryPool(limit)
	a.metrics.ObserveReadPool(pool)
	fields := []zap.Field{zap.Int64("max_read_bytes", limit)}
	if a.s.maxReadMiB == 0 && known {
		fields = append(fields, zap.Int64("container_limit_bytes", container))
	}
	a.log.Debug("log reads share a memory pool (storage.max_read_mib)", fields...)
	return pool
}

// tokenSource picks the catalog credential the config names.
func (c *cli) tokenSource(cc catalogConfig) (uc.TokenSource, error) {
	switch {
	case cc.TokenFile != "":
		return uc.FileToken(cc.TokenFile), nil
	case cc.TokenEnv != "":
		return uc.EnvToken(c.getenv, cc.TokenEnv), nil
	case cc.OAuth != nil:
		secret, err := os.ReadFile(cc.OAuth.ClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("catalog.oauth.client_secret_file: %w", err)
		}
		// The token endpoint trusts the same CA bundle as the catalog.
		hc, err := uc.NewHTTPClient(cc.CAFile, cc.InsecureSkipVerify)
		if err != nil {
			return nil, err
		}
		return uc.ClientCredentials(uc.ClientCredentialsConfig{
			ClientID: cc.OAuth.ClientID, ClientSecret: strings.TrimSpace(string(secret)),
			TokenURL: cc.OAuth.TokenURL, Scopes: cc.OAuth.Scopes, HTTPClient: hc,
		}), nil
	}
	return nil, nil
}

// pingHeartbeat tells a dead-man's-switch service the cycle succeeded.
func pingHeartbeat(ctx context.Context, rawURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may embed a secret; name it redacted instead
		}
		return fmt.Errorf("heartbeat %s: %w", redactURL(rawURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("heartbeat %s: HTTP %d", redactURL(rawURL), resp.StatusCode)
	}
	return nil
}

// pushMetrics pushes the registry to a Pushgateway (for once in a CronJob).
func pushMetrics(ctx context.Context, p pushConfig, reg *prometheus.Registry) error {
	if err := push.New(p.URL, p.Job).Gatherer(reg).PushContext(ctx); err != nil {
		return fmt.Errorf("pushgateway %s: %s", redactURL(p.URL), redactString(err.Error(), p.URL))
	}
	return nil
}

// reportFormats are the formats -o accepts for a cycle report.
var reportFormats = []string{"text", "json", "markdown"}

// writeReport writes a cycle report in the requested format.
func writeReport(w io.Writer, rep *sync.Report, format string) error {
	var buf bytes.Buffer
	var err error
	switch format {
	case "json":
		err = rep.WriteJSON(&buf)
	case "markdown":
		err = rep.WriteMarkdown(&buf)
	default:
		err = rep.WriteText(&buf)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}
