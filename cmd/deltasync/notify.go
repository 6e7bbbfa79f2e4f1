package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
	"gocloud.dev/pubsub"

	"github.com/deltasync/deltasync/sync/notify"
)

// notifyConfig is the `notify:` section: a change event per table
// outcome that matters (synced, held, refused, flagged, registered,
// orphaned), sent where people look (sync/notify). It holds no secret,
// only where to read them.
type notifyConfig struct {
	Instance    string             `json:"instance,omitempty"`
	QueueSize   int                `json:"queue_size,omitempty"`
	MaxAttempts int                `json:"max_attempts,omitempty"`
	Timeout     duration           `json:"timeout,omitempty"`
	Drain       duration           `json:"drain,omitempty"`
	OpenLineage *openLineageConfig `json:"openlineage,omitempty"`
	Pubsub      *pubsubConfig      `json:"pubsub,omitempty"`
	Webhook     *webhookConfig     `json:"webhook,omitempty"`
}

type openLineageConfig struct {
	URL        string `json:"url"`
	APIKeyFile string `json:"api_key_file,omitempty"`
	APIKeyEnv  string `json:"api_key_env,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
}

type pubsubConfig struct {
	URL string `json:"url"`
}

type webhookConfig struct {
	URL      string         `json:"url,omitempty"`
	URLEnv   string         `json:"url_env,omitempty"`
	Template string         `json:"template,omitempty"`
	Headers  []headerConfig `json:"headers,omitempty"`
}

// headerConfig is one request header: its value as written, or read
// from an environment variable or a file (a secret).
type headerConfig struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	Env   string `json:"env,omitempty"`
	File  string `json:"file,omitempty"`
}

// The notify section's defaults.
const (
	defaultNotifyDrain = 10 * time.Second
)

// notifySettings are the notify section checked: what newNotify builds
// the sinks from (nil: no notifications).
type notifySettings struct {
	opts  notify.Options
	drain time.Duration
	// sinks open each sink; a topic's opener returns its shutdown too.
	sinks []func(ctx context.Context) (notify.Sink, func(), error)
}

// redacted returns a copy safe to print.
func (n *notifyConfig) redacted() *notifyConfig {
	if n == nil {
		return nil
	}
	out := *n
	if n.OpenLineage != nil {
		o := *n.OpenLineage
		o.URL = redactURL(o.URL)
		out.OpenLineage = &o
	}
	if n.Pubsub != nil {
		out.Pubsub = &pubsubConfig{URL: redactURL(n.Pubsub.URL)}
	}
	if n.Webhook != nil {
		w := *n.Webhook
		w.URL = notify.RedactURL(w.URL)
		w.Headers = nil
		for _, h := range n.Webhook.Headers {
			if h.Value != "" {
				h.Value = "REDACTED"
			}
			w.Headers = append(w.Headers, h)
		}
		out.Webhook = &w
	}
	return &out
}

// buildNotify checks the notify section and turns it into sink openers;
// every problem names its key.
func (s *settings) buildNotify(p *problems, c *cli) {
	n := s.cfg.Notify
	if n == nil {
		return
	}
	if n.QueueSize < 0 || n.MaxAttempts < 0 || n.Timeout < 0 || n.Drain < 0 {
		p.add("notify: queue_size, max_attempts, timeout and drain must not be negative")
	}
	ns := &notifySettings{drain: defaultNotifyDrain, opts: notify.Options{Instance: n.Instance, QueueSize: n.QueueSize,
		MaxAttempts: n.MaxAttempts, AttemptTimeout: time.Duration(n.Timeout)}}
	if n.Drain > 0 {
		ns.drain = time.Duration(n.Drain)
	}
	if ns.opts.Instance == "" {
		ns.opts.Instance, _ = os.Hostname()
	}
	if o := n.OpenLineage; o != nil {
		s.buildOpenLineage(p, c, ns, o)
	}
	if ps := n.Pubsub; ps != nil {
		u, err := url.Parse(ps.URL)
		if err != nil || u.Scheme == "" {
			p.add("notify.pubsub.url %s: want a gocloud.dev/pubsub topic URL (awssqs://, awssns://, gcppubsub://, azuresb://, kafka://, nats://, rabbit://, mem://)", redactURL(ps.URL))
		} else {
			raw, name := ps.URL, "pubsub:"+u.Scheme
			ns.sinks = append(ns.sinks, func(ctx context.Context) (notify.Sink, func(), error) {
				t, err := pubsub.OpenTopic(ctx, raw)
				if err != nil {
					return nil, nil, fmt.Errorf("notify.pubsub.url %s: %w", redactURL(raw), err)
				}
				return notify.NewTopic(name, t), func() { _ = t.Shutdown(context.Background()) }, nil
			})
		}
	}
	if w := n.Webhook; w != nil {
		s.buildWebhook(p, c, ns, w)
	}
	if len(ns.sinks) == 0 {
		p.add("notify: no sink: set notify.openlineage, notify.pubsub or notify.webhook")
	}
	s.notify = ns
}

// buildOpenLineage checks the openlineage sink; its API key is read when
// the sink opens (a rotated secret, and check-config without the secret).
func (s *settings) buildOpenLineage(p *problems, c *cli, ns *notifySettings, o *openLineageConfig) {
	if o.APIKeyFile != "" && o.APIKeyEnv != "" {
		p.add("notify.openlineage: set at most one of api_key_file and api_key_env")
	}
	l := notify.Lineage{Namespace: o.Namespace, CatalogName: s.cfg.Catalog.Name, CatalogURI: redactURL(s.cfg.Catalog.URL)}
	if l.CatalogName == "" {
		l.CatalogName = "unity"
		switch {
		case s.hms != nil:
			l.CatalogName = "hive"
		case s.glue != nil:
			l.CatalogName = s.glue.name
		}
	}
	open := func(key string) (notify.Sink, error) {
		return notify.NewOpenLineage(o.URL, key, l, notify.HTTPOptions{})
	}
	if _, err := open(""); err != nil {
		p.add("notify.openlineage.url: %v", err)
		return
	}
	ns.sinks = append(ns.sinks, func(context.Context) (notify.Sink, func(), error) {
		key, err := secretValue(c, o.APIKeyFile, o.APIKeyEnv)
		if err != nil {
			return nil, nil, fmt.Errorf("notify.openlineage.api_key_%w", err)
		}
		sink, err := open(key)
		return sink, func() {}, err
	})
}

// buildWebhook checks the webhook sink; a URL or header read from the
// environment or a file is read when the sink opens.
func (s *settings) buildWebhook(p *problems, c *cli, ns *notifySettings, w *webhookConfig) {
	if (w.URL == "") == (w.URLEnv == "") {
		p.add("notify.webhook: set one of url and url_env")
	}
	if w.Template != "" {
		if _, err := notify.ParseTemplate(w.Template); err != nil {
			p.add("notify.webhook.template: %v", err)
		}
	}
	for i, hc := range w.Headers {
		set := 0
		for _, v := range []string{hc.Value, hc.Env, hc.File} {
			if v != "" {
				set++
			}
		}
		if hc.Name == "" || set != 1 {
			p.add("notify.webhook.headers[%d]: want a name and one of value, env and file", i)
		}
	}
	if w.URL != "" {
		if _, err := notify.NewWebhook(w.URL, "", notify.HTTPOptions{}); err != nil {
			p.add("notify.webhook.url: %v", err)
		}
	}
	ns.sinks = append(ns.sinks, func(context.Context) (notify.Sink, func(), error) {
		raw := w.URL
		if w.URLEnv != "" {
			if raw = c.getenv(w.URLEnv); raw == "" {
				return nil, nil, fmt.Errorf("notify.webhook.url_env: %s is not set", w.URLEnv)
			}
		}
		h := http.Header{}
		for i, hc := range w.Headers {
			v := hc.Value
			if v == "" {
				var err error
				if v, err = secretValue(c, hc.File, hc.Env); err != nil {
					return nil, nil, fmt.Errorf("notify.webhook.headers[%d].%w", i, err)
				}
			}
			h.Add(hc.Name, v)
		}
		sink, err := notify.NewWebhook(raw, w.Template, notify.HTTPOptions{Header: h})
		if err != nil {
			return nil, nil, fmt.Errorf("notify.webhook: %w", err)
		}
		return sink, func() {}, nil
	})
}

// secretValue reads a secret from file or the environment variable env
// (neither: ""); the error names the key, never the value.
func secretValue(c *cli, file, env string) (string, error) {
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("file: %w", err)
		}
		if len(b) == 0 {
			return "", fmt.Errorf("file: %s is empty", file)
		}
		return strings.TrimSpace(string(b)), nil
	case env != "":
		v := c.getenv(env)
		if v == "" {
			return "", fmt.Errorf("env: %s is not set", env)
		}
		return v, nil
	}
	return "", nil
}

// newNotify opens the configured sinks and starts their Dispatcher, its
// metrics on a's registry (nil: no notify section).
func (a *app) newNotify(ctx context.Context) (*notify.Dispatcher, error) {
	ns := a.s.notify
	if ns == nil {
		return nil, nil
	}
	var sinks []notify.Sink
	for _, open := range ns.sinks {
		s, release, err := open(ctx)
		if err != nil {
			for _, r := range a.notifyRelease {
				r()
			}
			return nil, err
		}
		sinks = append(sinks, s)
		a.notifyRelease = append(a.notifyRelease, release)
	}
	opts := ns.opts
	opts.Metrics, opts.Logger = notify.NewMetrics(a.registry), a.log.Named("notify")
	a.log.Info("change events on", zap.Int("sinks", len(sinks)), zap.String("instance", opts.Instance))
	return notify.New(opts, sinks...), nil
}

// closeNotify delivers what is queued, within notify.drain, and closes
// the sinks; what is left is counted as dropped (shutdown).
func (a *app) closeNotify() {
	if a.notify == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.s.notify.drain)
	defer cancel()
	if err := a.notify.Close(ctx); err != nil {
		a.log.Warn("change events left undelivered at shutdown (deltasync_notify_dropped_total{reason=\"shutdown\"})", zap.Error(err))
	}
	for _, r := range a.notifyRelease {
		r()
	}
}
