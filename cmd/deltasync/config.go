package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"reflect"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/redact"
	"github.com/deltasync/deltasync/sync"
)

// config is deltasync's whole configuration: defaults < YAML file (strict,
// ${VAR} expanded) < DELTASYNC_* environment < flags. It holds no secret
// values, only where to read them (files, env var names).
type config struct {
	Catalog          catalogConfig `json:"catalog"`
	Tables           []tableRule   `json:"tables,omitempty"`
	IgnoreProperties []string      `json:"ignore_properties,omitempty"`
	// IgnoreFieldMetadata are field-metadata key globs left out of the
	// schema comparison, besides plan.DefaultIgnoreFieldMetadata.
	IgnoreFieldMetadata []string `json:"ignore_field_metadata,omitempty"`
	// WatermarkUpdates: every_cycle (default), with_changes or a duration
	// (see sync.WatermarkUpdates).
	WatermarkUpdates string        `json:"watermark_updates"`
	Credentials      string        `json:"credentials"`
	Schedule         string        `json:"schedule"`
	Jitter           duration      `json:"jitter"`
	Concurrency      int           `json:"concurrency"`
	ResyncInterval   duration      `json:"resync_interval"`
	Backoff          backoffConfig `json:"backoff"`
	// MaxCycleDuration: run's /readyz answers 503 while a cycle has been
	// running longer than this (0: never).
	MaxCycleDuration duration      `json:"max_cycle_duration"`
	Listen           string        `json:"listen"`
	HTTP             httpConfig    `json:"http"`
	HeartbeatURL     string        `json:"heartbeat_url,omitempty"`
	Pushgateway      pushConfig    `json:"pushgateway"`
	Shard            string        `json:"shard,omitempty"`
	Log              logConfig     `json:"log"`
	Storage          storageConfig `json:"storage"`
	Events           *eventsConfig `json:"events,omitempty"` // see events.go
	// Register creates the records of tables found in storage (register.go).
	Register *registerConfig `json:"register,omitempty"`
	// Audit is where the audit trail goes (audit.go).
	Audit auditConfig `json:"audit"`
}

type catalogConfig struct {
	URL                string       `json:"url"`
	TokenFile          string       `json:"token_file,omitempty"`
	TokenEnv           string       `json:"token_env,omitempty"`
	OAuth              *oauthConfig `json:"oauth,omitempty"`
	CAFile             string       `json:"ca_file,omitempty"`
	InsecureSkipVerify bool         `json:"insecure_skip_verify,omitempty"`
	Timeout            duration     `json:"timeout"`
	MaxRPS             float64      `json:"max_rps,omitempty"`
	// MaxRetryAfter caps how long one retry waits on a server's Retry-After.
	MaxRetryAfter duration `json:"max_retry_after"`
	// IdleTimeout gives up an attempt that receives nothing for this long.
	IdleTimeout duration `json:"idle_timeout"`
	// MaxListEntries bounds one listing (catalogs, schemas of a catalog,
	// tables of a schema).
	MaxListEntries int `json:"max_list_entries"`
}

type oauthConfig struct {
	ClientID         string   `json:"client_id"`
	ClientSecretFile string   `json:"client_secret_file"`
	TokenURL         string   `json:"token_url"`
	Scopes           []string `json:"scopes,omitempty"`
}

type tableRule struct {
	Include patternList `json:"include"`
	Exclude []string    `json:"exclude,omitempty"`
	Mode    string      `json:"mode,omitempty"`
	// OnDestructive: sync (default: the log wins) or hold (a table with a
	// destructive change is held whole, see sync.OnDestructiveHold).
	OnDestructive string `json:"on_destructive,omitempty"`
}

// patternList is a list of table patterns that may also be written as a
// single string ("include: main.sales.*"), read as a one-element list, as
// users write it.
type patternList []string

func (p *patternList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*p = patternList{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Type.Kind() != reflect.String {
			// "want a list, got number", not a message about patternList.
			te.Type = reflect.TypeFor[[]string]()
		}
		return err
	}
	*p = list
	return nil
}

type backoffConfig struct {
	Initial duration `json:"initial"`
	Max     duration `json:"max"`
}

// httpConfig secures the daemon's HTTP endpoints.
type httpConfig struct {
	// TokenFile holds the bearer token required on every endpoint except
	// /healthz and /readyz; empty means no token (then bind listen to
	// 127.0.0.1 or put an authenticating proxy in front).
	TokenFile string `json:"token_file,omitempty"`
}

type pushConfig struct {
	URL string `json:"url,omitempty"`
	Job string `json:"job,omitempty"`
}

type logConfig struct {
	Format string `json:"format"`
	Level  string `json:"level"`
}

// duration is a time.Duration written as "30s" in YAML.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"30s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// defaultConfig is the configuration before file, env and flags.
func defaultConfig() config {
	b := sync.DefaultBackoff()
	return config{
		Catalog: catalogConfig{Timeout: duration(30 * time.Second), MaxRetryAfter: duration(30 * time.Second),
			IdleTimeout: duration(10 * time.Second), MaxListEntries: 100_000},
		Storage: storageConfig{MaxLoadMiB: deltalog.DefaultMaxLoadBytes >> 20,
			MaxInFlight: deltalog.DefaultMaxInFlight, MaxInFlightPerBucket: deltalog.DefaultMaxInFlightPerBucket},
		Credentials:      "ambient",
		WatermarkUpdates: "every_cycle",
		Schedule:         "@every 1m",
		Jitter:           duration(5 * time.Second),
		Concurrency:      4,
		Backoff:          backoffConfig{Initial: duration(b.Initial), Max: duration(b.Max)},
		Listen:           ":9464",
		Pushgateway:      pushConfig{Job: "deltasync"},
		Log:              logConfig{Format: "json", Level: "info"},

		// A table unchanged in the listing and in its log is confirmed without
		// per-table catalog reads; each is still fully re-read hourly.
		ResyncInterval: duration(time.Hour),

		// Far beyond a healthy cycle at the default schedule (one table is
		// bounded by a 5 m timeout), short enough to be noticed.
		MaxCycleDuration: duration(30 * time.Minute),
	}
}

// parseConfigFile decodes YAML strictly (unknown keys are errors, each
// named by its full path). ${VAR} in string values (not comments) is
// replaced from env; "$$" is a "$". See decodeConfigYAML.
func parseConfigFile(data []byte, env map[string]string, into *config) error {
	return decodeConfigYAML(data, env, into)
}

// expandStrings applies os.Expand to every string in a decoded document.
func expandStrings(v any, mapping func(string) string) any {
	switch x := v.(type) {
	case string:
		return os.Expand(x, mapping)
	case []any:
		for i := range x {
			x[i] = expandStrings(x[i], mapping)
		}
	case map[string]any:
		for k := range x {
			x[k] = expandStrings(x[k], mapping)
		}
	}
	return v
}

// validate reports every problem at once.
func (c *config) validate() error {
	var errs []error
	errs = append(errs, c.Catalog.validate()...)
	errs = append(errs, c.validateTables()...)
	errs = append(errs, c.validateCycle()...)
	errs = append(errs, c.validateHTTP()...)
	if _, err := sync.ParseShard(c.Shard); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Events.validate()...)
	errs = append(errs, c.Register.validate(c.Storage)...)
	errs = append(errs, c.Log.validate()...)
	errs = append(errs, c.Audit.validate()...)
	return errors.Join(errs...)
}

// problems collects a section's errors; add records one as fmt.Errorf.
type problems []error

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// tablesKeys names the rules NewSelector refused by their config keys
// (tables[i], tables[i].include, tables[i].exclude); other errors pass.
func tablesKeys(err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var re *sync.RuleError
		if !errors.As(e, &re) {
			out = append(out, e)
			continue
		}
		key := fmt.Sprintf("tables[%d]", re.Rule)
		if re.Field != "" {
			key += "." + strings.ToLower(re.Field)
		}
		out = append(out, fmt.Errorf("%s: %w", key, re.Err))
	}
	return errors.Join(out...)
}

// addErr records err unless it is nil.
func (p *problems) addErr(err error) {
	if err != nil {
		*p = append(*p, err)
	}
}

// validate checks catalog: where it is and how deltasync signs in.
func (cc *catalogConfig) validate() problems {
	var p problems
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
	return p
}

// validateTables checks which tables are read, and how: resync_interval,
// tables, ignore_properties, credentials.
func (c *config) validateTables() problems {
	var p problems
	if c.ResyncInterval < 0 {
		p.add("resync_interval: must not be negative (0: every table fully re-read every cycle)")
	}
	if len(c.Tables) == 0 && c.Register.options() == nil {
		p.add("tables: at least one rule with an include pattern is required (or pass --include), or a register rule")
	}
	_, err := sync.NewSelector(c.rules())
	p.addErr(tablesKeys(err))
	for _, g := range c.IgnoreProperties {
		if _, err := path.Match(g, ""); err != nil {
			p.add("ignore_properties %q: %v", g, err)
		}
	}
	if _, err := sync.ParseWatermarkUpdates(c.WatermarkUpdates); err != nil {
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
	return p
}

// validateCycle checks when and how hard the daemon works: schedule,
// jitter, concurrency, backoff, max_cycle_duration.
func (c *config) validateCycle() problems {
	var p problems
	_, err := sync.ParseSchedule(c.Schedule)
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
	if c.Backoff.Initial <= 0 || c.Backoff.Max < c.Backoff.Initial {
		p.add("backoff: want 0 < initial <= max, got initial %s max %s",
			time.Duration(c.Backoff.Initial), time.Duration(c.Backoff.Max))
	}
	return p
}

// validateHTTP checks what the daemon serves and calls: listen, http,
// heartbeat_url, pushgateway.
func (c *config) validateHTTP() problems {
	var p problems
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p.add("listen %q: %v", c.Listen, err)
	}
	if _, err := readGuardToken(c.HTTP.TokenFile); err != nil {
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
	return p
}

// validate checks log.
func (l logConfig) validate() problems {
	var p problems
	if l.Format != "json" && l.Format != "console" {
		p.add("log.format %q: want json or console", l.Format)
	}
	if _, err := zapcore.ParseLevel(l.Level); err != nil {
		p.add("log.level %q: want debug, info, warn or error", l.Level)
	}
	return p
}

// rules converts the table rules for sync.NewSelector.
func (c *config) rules() []sync.Rule {
	out := make([]sync.Rule, 0, len(c.Tables))
	for _, t := range c.Tables {
		out = append(out, sync.Rule{Include: t.Include, Exclude: t.Exclude, Mode: sync.Mode(t.Mode), OnDestructive: sync.OnDestructive(t.OnDestructive)})
	}
	return out
}

// redacted returns a copy safe to print: URL credentials, paths and query
// values are hidden (heartbeat URLs often embed a secret in either).
func (c config) redacted() config {
	c.Catalog.URL = redactURL(c.Catalog.URL)
	c.HeartbeatURL = redactURL(c.HeartbeatURL)
	c.Pushgateway.URL = redactURL(c.Pushgateway.URL)
	c.Events = c.Events.redacted()
	if c.Catalog.OAuth != nil {
		o := *c.Catalog.OAuth
		o.TokenURL = redactURL(o.TokenURL)
		c.Catalog.OAuth = &o
	}
	return c
}

// redactURL is the rule for configured service URLs (redact.Endpoint).
var redactURL = redact.Endpoint

// marshalYAML renders the configuration for check-config.
func (c config) marshalYAML() ([]byte, error) { return yaml.Marshal(c) }
