package notify

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the notification collectors: deltasync_notify_*. Create
// them once per registry with NewMetrics; a nil *Metrics counts nothing.
type Metrics struct {
	delivered *prometheus.CounterVec
	failed    *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	depth     *prometheus.GaugeVec
}

// The reasons an event is dropped (deltasync_notify_dropped_total).
const (
	DropQueueFull = "queue_full" // the sink's queue was full
	DropRetries   = "retries"    // every attempt failed
	DropRejected  = "rejected"   // the sink refused it (a 4xx): resending would not help
	DropShutdown  = "shutdown"   // still queued when the shutdown drain ended
	DropEncode    = "encode"     // it could not be encoded for the sink
)

// NewMetrics creates the collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "deltasync"
	m := &Metrics{
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "notify_delivered_total",
			Help: "Change events delivered, by sink."}, []string{"sink"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "notify_failed_total",
			Help: "Change event delivery attempts that failed (each is retried with backoff until dropped), by sink."}, []string{"sink"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "notify_dropped_total",
			Help: "Change events never delivered, by sink and reason (queue_full, retries, rejected, shutdown, encode)."}, []string{"sink", "reason"}),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "notify_queue_depth",
			Help: "Change events waiting in a sink's queue."}, []string{"sink"}),
	}
	if reg != nil {
		reg.MustRegister(m.delivered, m.failed, m.dropped, m.depth)
	}
	return m
}

// init makes every series of sink exist at 0, so that rates and alerts
// see it from the start.
func (m *Metrics) init(sink string) {
	if m == nil {
		return
	}
	m.delivered.WithLabelValues(sink)
	m.failed.WithLabelValues(sink)
	for _, r := range []string{DropQueueFull, DropRetries, DropRejected, DropShutdown, DropEncode} {
		m.dropped.WithLabelValues(sink, r)
	}
	m.depth.WithLabelValues(sink).Set(0)
}

func (m *Metrics) deliver(sink string) {
	if m != nil {
		m.delivered.WithLabelValues(sink).Inc()
	}
}

func (m *Metrics) fail(sink string) {
	if m != nil {
		m.failed.WithLabelValues(sink).Inc()
	}
}

func (m *Metrics) drop(sink, reason string, n int) {
	if m != nil && n > 0 {
		m.dropped.WithLabelValues(sink, reason).Add(float64(n))
	}
}

func (m *Metrics) setDepth(sink string, n int) {
	if m != nil {
		m.depth.WithLabelValues(sink).Set(float64(n))
	}
}
