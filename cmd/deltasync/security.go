package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
)

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
	// MaxInFlight and MaxInFlightPerBucket bound the object-store requests
	// in flight: in the process, and to one bucket (S3 or GCS bucket,
	// Azure account and container). Apart from concurrency, which bounds
	// the tables reconciled at once: on a store each request is a round
	// trip, so these, not the CPU, set how many tables a cycle checks.
	MaxInFlight          int `json:"max_in_flight"`
	MaxInFlightPerBucket int `json:"max_in_flight_per_bucket"`
}

// limits are the deltalog storage limits of the configuration.
func (s storageConfig) limits() deltalog.StorageLimits {
	return deltalog.StorageLimits{MaxInFlight: s.MaxInFlight, MaxInFlightPerBucket: s.MaxInFlightPerBucket}
}

// bucketConfig holds the gocloud URL parameters of one bucket.
type bucketConfig struct {
	Location string            `json:"location"` // scheme://bucket
	Options  map[string]string `json:"options,omitempty"`
}

// policy builds the sync storage policy.
func (s storageConfig) policy() (*sync.StoragePolicy, error) {
	var buckets []sync.BucketOptions
	for _, b := range s.Buckets {
		buckets = append(buckets, sync.BucketOptions{Location: b.Location, Options: b.Options})
	}
	return sync.NewStoragePolicy(s.AllowedLocations, buckets)
}

// validateSecurity reports the problems of the settings that guard storage
// access and secrets: the storage policy, the token variable (getenv reads
// the environment given to deltasync) and the Retry-After cap.
func (c *config) validateSecurity(getenv func(string) string) error {
	var errs []error
	if _, err := c.Storage.policy(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			errs = append(errs, errors.New(line))
		}
	}
	if name := c.Catalog.TokenEnv; name != "" && strings.TrimSpace(getenv(name)) == "" {
		errs = append(errs, fmt.Errorf("catalog.token_env: environment variable %s is unset or empty", name))
	}
	if c.Storage.MaxLoadMiB <= 0 {
		errs = append(errs, fmt.Errorf("storage.max_load_mib %d: must be positive", c.Storage.MaxLoadMiB))
	}
	if c.Storage.MaxInFlight <= 0 {
		errs = append(errs, fmt.Errorf("storage.max_in_flight %d: must be positive", c.Storage.MaxInFlight))
	}
	if n := c.Storage.MaxInFlightPerBucket; n <= 0 || n > c.Storage.MaxInFlight {
		errs = append(errs, fmt.Errorf("storage.max_in_flight_per_bucket %d: must be positive and at most storage.max_in_flight (%d)", n, c.Storage.MaxInFlight))
	}
	if c.Catalog.MaxRetryAfter <= 0 {
		errs = append(errs, errors.New("catalog.max_retry_after: must be positive"))
	}
	return errors.Join(errs...)
}

// checkSecretFile checks a file holding one secret (a token): it must be
// a readable regular file whose content, trimmed, is one non-empty word.
func checkSecretFile(key, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file holding the token", key, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return fmt.Errorf("%s %s: file is empty or only whitespace", key, path)
	case strings.ContainsAny(tok, " \t\r\n"):
		return fmt.Errorf("%s %s: the token must be one line without spaces", key, path)
	}
	return nil
}

// redactString removes every configured URL and its parts from s, for
// errors from libraries that print the URL they were given.
func redactString(s string, urls ...string) string {
	for _, raw := range urls {
		if raw == "" {
			continue
		}
		s = strings.ReplaceAll(s, raw, redactURL(raw))
		if u, err := url.Parse(raw); err == nil {
			if p := strings.Trim(u.Path, "/"); len(p) >= 4 {
				s = strings.ReplaceAll(s, p, "REDACTED")
			}
			if u.RawQuery != "" {
				s = strings.ReplaceAll(s, u.RawQuery, "REDACTED")
			}
		}
	}
	return s
}

// longWait is how long a wait before a catalog retry must be to be logged.
const longWait = 3 * time.Second

// retryPolicy is the catalog client's retry policy: the server's
// Retry-After is capped at catalog.max_retry_after, and every wait of
// longWait or more is logged with its reason, so a slow catalog is never
// silent.
func retryPolicy(cc catalogConfig, log *zap.Logger, m *sync.Metrics) catalog.RetryPolicy {
	return catalog.RetryPolicy{
		MaxRetryAfter: time.Duration(cc.MaxRetryAfter),
		Sleep:         m.CatalogRetrySleep, // counts the waiting requests
		OnWait: func(op string, attempt int, wait, retryAfter time.Duration, err error) {
			if wait < longWait {
				return
			}
			fields := []zap.Field{zap.String("operation", op), zap.Int("attempt", attempt),
				zap.Duration("wait", wait), zap.String("reason", err.Error())}
			if retryAfter > 0 {
				fields = append(fields, zap.Duration("retry_after", retryAfter))
			}
			log.Warn("waiting before retrying a catalog request", fields...)
		},
	}
}
