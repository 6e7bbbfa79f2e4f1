package events

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the collectors of event-driven sync. They are registered
// only when events are configured (NewMetrics), so the metrics of a
// daemon without events do not change. A nil *Metrics records nothing.
type Metrics struct {
	received     *prometheus.CounterVec
	matched      prometheus.Counter
	unmatched    *prometheus.CounterVec
	poison       prometheus.Counter
	lag          prometheus.Histogram
	subUp        *prometheus.GaugeVec
	subFailures  *prometheus.CounterVec
	readsSkipped prometheus.Counter
	gaveUp       prometheus.Counter
	queued       prometheus.Gauge
}

// Unmatched reasons (label values of deltasync_events_unmatched_total).
const (
	UnmatchedNotCreated = "not_created"   // a removal or other non-create object event
	UnmatchedNotLog     = "not_delta_log" // not under a _delta_log directory
	UnmatchedNotCommit  = "not_commit"    // a _delta_log file that names no new version (checksum, compaction, temp file)
	UnmatchedNoTable    = "no_table"      // no selected table has that root
	UnmatchedNoObject   = "no_object"     // a notification about no object (test, validation)
)

// NewMetrics creates the event collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "deltasync"
	m := &Metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_received_total",
			Help: "Messages received from event subscriptions, by subscription."}, []string{"subscription"}),
		matched: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "events_matched_total",
			Help: "Object events that named a selected table's new log file."}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_unmatched_total",
			Help: "Object events acknowledged without naming a table, by reason (not_created, not_delta_log, not_commit, no_table, no_object)."},
			[]string{"reason"}),
		poison: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "events_poison_total",
			Help: "Messages that are no storage notification deltasync understands (acknowledged and dropped)."}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "event_lag_seconds",
			Help:    "From an object event's time to its table's reconcile having seen the new log file.",
			Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900}}),
		subUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "event_subscription_up",
			Help: "1 while the event subscription is open and receiving, 0 while it is being reconnected."},
			[]string{"subscription"}),
		subFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "event_subscription_failures_total",
			Help: "Event subscriptions that failed to open or broke while receiving, by subscription."},
			[]string{"subscription"}),
		readsSkipped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "log_reads_skipped_total",
			Help: "Table log reads (storage LISTs) a cron cycle skipped because no event arrived since the last full read."}),
		gaveUp: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "events_expired_total",
			Help: "Events whose commit the table's reconcile had still not seen after the maximum wait; returned to the broker (or left to the cron cycle)."}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "events_pending_tables",
			Help: "Tables with events waiting for (or in) a reconcile."}),
	}
	reg.MustRegister(m.received, m.matched, m.unmatched, m.poison, m.lag, m.subUp, m.subFailures, m.readsSkipped, m.gaveUp, m.queued)
	for _, r := range []string{UnmatchedNotCreated, UnmatchedNotLog, UnmatchedNotCommit, UnmatchedNoTable, UnmatchedNoObject} {
		m.unmatched.WithLabelValues(r)
	}
	return m
}

func (m *Metrics) receivedFrom(sub string) {
	if m != nil {
		m.received.WithLabelValues(sub).Inc()
	}
}

func (m *Metrics) matchedEvent() {
	if m != nil {
		m.matched.Inc()
	}
}

func (m *Metrics) unmatchedEvent(reason string) {
	if m != nil {
		m.unmatched.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) poisonMessage() {
	if m != nil {
		m.poison.Inc()
	}
}

func (m *Metrics) observeLag(d time.Duration) {
	if m != nil {
		m.lag.Observe(max(d, 0).Seconds())
	}
}

func (m *Metrics) subscription(sub string, up bool, failed bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.subUp.WithLabelValues(sub).Set(v)
	if failed {
		m.subFailures.WithLabelValues(sub).Inc()
	} else {
		m.subFailures.WithLabelValues(sub).Add(0)
	}
}

func (m *Metrics) skippedRead() {
	if m != nil {
		m.readsSkipped.Inc()
	}
}

func (m *Metrics) expired() {
	if m != nil {
		m.gaveUp.Inc()
	}
}

func (m *Metrics) pending(n int) {
	if m != nil {
		m.queued.Set(float64(n))
	}
}
