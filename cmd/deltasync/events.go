package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"gocloud.dev/pubsub"
	_ "gocloud.dev/pubsub/mempubsub" // mem:// (tests, demos)

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
)

// The daemon's reconciler registers tables from events (register rules
// plus events): Events finds that out by this interface, so a change to
// it must not silently turn the feature off.
var _ events.Registrar = (*sync.Reconciler)(nil)

// eventsConfig is the `events:` section: storage notifications that make a
// commit reach the catalog in seconds. The cron schedule stays the safety
// net. Written as a list it is just the subscription URLs.
type eventsConfig struct {
	// Subscriptions are gocloud.dev/pubsub subscription URLs:
	// awssqs:// (alias awssnssqs://), gcppubsub://, azuresb://, kafka://,
	// nats://, rabbit://, mem://.
	Subscriptions []string `json:"subscriptions,omitempty"`
	Debounce      duration `json:"debounce,omitempty"`
	QueueSize     int      `json:"queue_size,omitempty"`
	MaxWait       duration `json:"max_wait,omitempty"`
}

func (e *eventsConfig) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*e = eventsConfig{Subscriptions: list}
		return nil
	}
	type plain eventsConfig
	var p plain
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	*e = eventsConfig(p)
	return nil
}

// eventOpener opens one subscription URL; release frees its connection.
type eventOpener func(ctx context.Context, c *cli, u *url.URL) (sub *pubsub.Subscription, release func(), err error)

// eventOpeners maps a URL scheme to its opener. Each driver's file adds
// itself from init; build tags (nosqs, nogcppubsub, noazuresb, nokafka,
// nonats, norabbit) leave drivers out of the binary.
var eventOpeners = map[string]eventOpener{
	"mem": openWithDefaultMux,
}

// eventSchemeAliases are accepted spellings of a driver's scheme.
var eventSchemeAliases = map[string]string{"awssnssqs": "awssqs", "sqs": "awssqs"}

// openWithDefaultMux opens u with the driver gocloud registered for it.
func openWithDefaultMux(ctx context.Context, _ *cli, u *url.URL) (*pubsub.Subscription, func(), error) {
	sub, err := pubsub.OpenSubscription(ctx, u.String())
	return sub, nil, err
}

// parseEventURL checks a subscription URL and resolves scheme aliases.
func parseEventURL(raw string) (*url.URL, eventOpener, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return nil, nil, fmt.Errorf("events: subscription %q: want a URL such as awssqs://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE?region=REGION", redactURL(raw))
	}
	if a, ok := eventSchemeAliases[u.Scheme]; ok {
		u.Scheme = a
	}
	open, ok := eventOpeners[u.Scheme]
	if !ok {
		var have []string
		for s := range eventOpeners {
			have = append(have, s)
		}
		sort.Strings(have)
		return nil, nil, fmt.Errorf("events: subscription %q: scheme %s:// is not in this build (have %s)",
			redactURL(raw), u.Scheme, strings.Join(have, ", "))
	}
	return u, open, nil
}

// withSubscriptions returns a copy of e (nil: defaults) whose subscriptions
// are urls.
func (e *eventsConfig) withSubscriptions(urls []string) *eventsConfig {
	var out eventsConfig
	if e != nil {
		out = *e
	}
	out.Subscriptions = urls
	return &out
}

// redacted returns a copy safe to print.
func (e *eventsConfig) redacted() *eventsConfig {
	if e == nil {
		return nil
	}
	out := *e
	out.Subscriptions = nil
	for _, s := range e.Subscriptions {
		out.Subscriptions = append(out.Subscriptions, redactURL(s))
	}
	return &out
}

// buildEvents checks the events section and builds the events options
// from it: one Source per subscription (none: no events); newDaemon adds
// the metrics and logger.
func (s *settings) buildEvents(p *problems, c *cli) {
	e := s.cfg.Events
	// The events' reconciles share the cycle's full-read slots; their
	// catalog calls take the reconciler's turns (sync/concurrency.go). The
	// slots are counted as the reconciler counts them, from the options
	// buildCycle gave it.
	reads := sync.ResolveReadConcurrency(s.reconcile.ReadConcurrency, s.reconcile.Concurrency)
	s.events = events.Options{Concurrency: reads, ResyncInterval: time.Duration(s.cfg.ResyncInterval)}
	if e == nil {
		return
	}
	for _, raw := range e.Subscriptions {
		u, open, err := parseEventURL(raw)
		if err != nil {
			p.addErr(err)
			continue
		}
		s.events.Sources = append(s.events.Sources, events.Source{
			Name: redactURL(raw),
			Open: func(ctx context.Context) (*pubsub.Subscription, func(), error) { return open(ctx, c, u) },
		})
	}
	if e.Debounce < 0 || e.MaxWait < 0 || e.QueueSize < 0 {
		p.add("events: debounce, max_wait and queue_size must not be negative")
	}
	s.events.Debounce, s.events.QueueSize, s.events.MaxWait = time.Duration(e.Debounce), e.QueueSize, time.Duration(e.MaxWait)
}

// newEvents builds event-driven sync from the settings (nil when no
// subscription is configured), its metrics on a's registry.
func newEvents(s settings, a *app) (*events.Events, error) {
	if len(s.events.Sources) == 0 {
		return nil, nil
	}
	opts := s.events
	opts.Metrics, opts.Logger = events.NewMetrics(a.registry), a.log
	return events.New(opts)
}

// eventsReady is nil without events or when every subscription is open.
func (a *app) eventsReady() error {
	if a.events == nil {
		return nil
	}
	return a.events.Ready()
}

// startEvents runs event-driven sync beside the cron loop; the returned
// function stops it (after ctx is done) and waits.
func (a *app) startEvents(ctx context.Context) func() {
	if a.events == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = a.events.Run(ctx, a.rec)
	}()
	return func() { <-done }
}
