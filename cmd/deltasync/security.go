package main

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/metrics"
)

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

// retryPolicy completes the catalog client's retry policy p (whose
// MaxRetryAfter is catalog.max_retry_after): every wait of longWait or more
// is logged with its reason, so a slow catalog is never silent.
func retryPolicy(p uc.RetryPolicy, log *zap.Logger, m *metrics.Metrics) uc.RetryPolicy {
	p.Sleep = m.CatalogRetrySleep // counts the waiting requests
	p.OnWait = func(op string, attempt int, wait, retryAfter time.Duration, err error) {
		if wait < longWait {
			return
		}
		fields := []zap.Field{zap.String("operation", op), zap.Int("attempt", attempt),
			zap.Duration("wait", wait), zap.String("reason", err.Error())}
		if retryAfter > 0 {
			fields = append(fields, zap.Duration("retry_after", retryAfter))
		}
		log.Warn("waiting before retrying a catalog request", fields...)
	}
	return p
}
