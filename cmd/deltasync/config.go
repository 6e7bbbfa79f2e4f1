package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/internal/redact"
	"github.com/deltasync/deltasync/sync"
)

// The configuration goes one way, and a new section (a key such as
// on_destructive, a block such as audit:) goes through the same three
// places; register.go is one section done so:
//
//  1. parse: a field of config below (its json tag is the YAML key), its
//     default in defaultConfig, and its flag, if any, in addSyncFlags and
//     loadConfig (wiring.go), with the key it sets in flagKeys
//     (configsource.go) so that a problem names the flag. Only the shape
//     is checked here: unknown keys and wrong types (configfile.go).
//  2. validate + construct: a build function called from cli.settings
//     (settings.go) checks the section, names each problem by its key and
//     turns it into typed values in one step; nothing else validates it.
//  3. typed value: a field of settings (a library's Options where there is
//     one), which the commands (newApp, newDaemon, serve, cycleCommand)
//     take instead of cfg.

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
	WatermarkUpdates string   `json:"watermark_updates"`
	Credentials      string   `json:"credentials"`
	Schedule         string   `json:"schedule"`
	Jitter           duration `json:"jitter"`
	Concurrency      int      `json:"concurrency"`
	// ReadConcurrency: tables read in full at once (0: the default,
	// sync.DefaultReadConcurrency; never below concurrency).
	ReadConcurrency int           `json:"read_concurrency"`
	ResyncInterval  duration      `json:"resync_interval"`
	Backoff         backoffConfig `json:"backoff"`
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
	// Notify sends change events to lineage tools, a bus, a webhook (notify.go).
	Notify *notifyConfig `json:"notify,omitempty"`
	// Register creates the records of tables found in storage (register.go).
	Register *registerConfig `json:"register,omitempty"`
	// Audit is where the audit trail goes (audit.go).
	Audit auditConfig `json:"audit"`
}

type catalogConfig struct {
	// URL is Unity Catalog's https://.../api/2.1/unity-catalog, a Hive
	// Metastore's thrift://host:9083 (the HMS kind, hmssettings.go), or
	// glue://REGION?… (the Glue kind, gluesettings.go).
	URL string `json:"url"`
	// Name (HMS and Glue) is the first part of its tables' names,
	// <name>.<db>.<table> (default hive; Glue: awsdatacatalog).
	Name string `json:"name,omitempty"`
	// Columns (HMS only): placeholder (default) or real.
	Columns            string       `json:"columns,omitempty"`
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

// storageConfig says which storage locations catalog records may name and
// how each bucket is reached. Catalog records never carry driver options:
// endpoint, region, path style and account are set here, per bucket.
type storageConfig struct {
	// AllowedLocations are scheme://bucket/prefix globs ("**": any depth).
	// Unset: every s3, gs, azblob and abfss bucket, and no local path.
	AllowedLocations []string       `json:"allowed_locations,omitempty"`
	Buckets          []bucketConfig `json:"buckets,omitempty"`
	// MaxLoadMiB is the memory budget of one table's log read (MiB): a
	// table whose Load would hold more at once is flagged, not read.
	MaxLoadMiB int64 `json:"max_load_mib"`
	// MaxReadMiB bounds the bytes all log reads of the process hold at
	// once (MiB; the oldest read may go one MaxLoadMiB over it). 0: the
	// default, min(defaultMaxReadMiB, half the container's memory limit)
	// and never below MaxLoadMiB (maxReadBytes).
	MaxReadMiB int64 `json:"max_read_mib"`
	// MaxInFlight and MaxInFlightPerBucket bound the object-store requests
	// in flight: in the process, and to one bucket (S3 or GCS bucket,
	// Azure account and container). Apart from concurrency, which bounds
	// the tables reconciled at once: on a store each request is a round
	// trip, so these, not the CPU, set how many tables a cycle checks.
	MaxInFlight          int `json:"max_in_flight"`
	MaxInFlightPerBucket int `json:"max_in_flight_per_bucket"`
}

// bucketConfig holds the gocloud URL parameters of one bucket.
type bucketConfig struct {
	Location string            `json:"location"` // scheme://bucket
	Options  map[string]string `json:"options,omitempty"`
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

// redacted returns a copy safe to print: URL credentials, paths and query
// values are hidden (heartbeat URLs often embed a secret in either).
func (c config) redacted() config {
	c.Catalog.URL = redactURL(c.Catalog.URL)
	c.HeartbeatURL = redactURL(c.HeartbeatURL)
	c.Pushgateway.URL = redactURL(c.Pushgateway.URL)
	c.Events = c.Events.redacted()
	c.Notify = c.Notify.redacted()
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
