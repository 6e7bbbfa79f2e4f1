package metrics

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync/plan"
)

// Metrics holds deltasync's Prometheus collectors. Create it once per
// registry with New; the names are a published contract (alert rules
// and dashboards depend on them), so they are only ever added to.
type Metrics struct {
	tables             *tableCollector // deltasync_table_*
	syncs              *prometheus.CounterVec
	errors             *prometheus.CounterVec
	cycleDuration      prometheus.Histogram
	cycles             *prometheus.CounterVec
	lastSuccessfulCyle prometheus.Gauge
	storageRequests    *prometheus.CounterVec
	storageDuration    *prometheus.HistogramVec
	catalogRequests    *prometheus.CounterVec
	catalogDuration    *prometheus.HistogramVec
	buildInfo          *prometheus.GaugeVec
	// The running cycle, visible before it ends (progress.go).
	cycleInProgress     prometheus.Gauge
	cycleStartedTs      prometheus.Gauge
	cycleListed         prometheus.Gauge
	cycleDone           prometheus.Gauge
	catalogRetryWaiting prometheus.Gauge
	// Registration (sync/register).
	discovered    prometheus.Gauge
	registrations *prometheus.CounterVec
	// readPool is the process's log-read memory pool (ObserveReadPool).
	readPool *readPoolCollector
	// gates are the process's storage gates (ObserveStorageGates).
	gates *storageGatesCollector
}

// New creates the collectors and registers them on reg. version is
// the build version for deltasync_build_info.
func New(reg prometheus.Registerer, version string) *Metrics {
	return newMetrics(reg, version, runtime.Version())
}

func newMetrics(reg prometheus.Registerer, version, goversion string) *Metrics {
	const ns = "deltasync"
	m := &Metrics{
		tables: newTableCollector(ns),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "syncs_total",
			Help: "Table reconciles by outcome (unchanged, synced, flagged, failed; registered, would_register, already_registered and orphaned with register rules)."}, []string{"outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "errors_total",
			Help: "Errors by reason (catalog, storage, log, conflict, unsupported, config, internal, location, refused, missing_schema, orphaned)."}, []string{"reason"}),
		cycleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "cycle_duration_seconds",
			Help:    "Duration of a full reconcile cycle over all selected tables.",
			Buckets: []float64{0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600}}),
		cycles: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "cycles_total",
			Help: "Reconcile cycles by result (success: every table reconciled or flagged; failure: some table failed)."},
			[]string{"result"}),
		lastSuccessfulCyle: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "last_successful_cycle_timestamp_seconds",
			Help: "Unix time the last successful cycle finished."}),
		storageRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "storage_requests_total",
			Help: "Object storage requests made reading Delta logs, by op (list, get) and result (ok, error)."},
			[]string{"op", "result"}),
		storageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "storage_request_duration_seconds",
			Help: "Latency of object storage requests.", Buckets: prometheus.DefBuckets}, []string{"op"}),
		catalogRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "catalog_requests_total",
			Help: "Unity Catalog API requests by operation and HTTP status code (\"error\" when no response)."},
			[]string{"operation", "code"}),
		catalogDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "catalog_request_duration_seconds",
			Help: "Latency of Unity Catalog API requests.", Buckets: prometheus.DefBuckets}, []string{"operation"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "build_info",
			Help: "Always 1; labels carry the deltasync version and Go version."}, []string{"version", "goversion"}),
		cycleInProgress: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_in_progress",
			Help: "1 while a reconcile cycle runs, else 0."}),
		cycleStartedTs: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_started_timestamp_seconds",
			Help: "Unix time the running (or, when none runs, the last) cycle started; 0 before the first."}),
		cycleListed: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_tables_listed",
			Help: "Tables the running (or last) cycle has listed and queued for reconciling so far; its total once listing ends."}),
		cycleDone: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_tables_done",
			Help: "Tables the running (or last) cycle has reconciled so far."}),
		catalogRetryWaiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "catalog_requests_waiting",
			Help: "Unity Catalog requests now held back before being sent: backoff before a retry (5xx, timeout, connection error), a 429's Retry-After, or catalog.max_rps."}),
		discovered: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "tables_discovered",
			Help: "Delta tables the last discovery found under the register rules' location templates, registered or not."}),
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "registrations_total",
			Help: "Tables found in storage by what the register phase did (registered, would_register, already_registered, flagged, failed)."},
			[]string{"outcome"}),
		readPool: newReadPoolCollector(ns),
		gates:    newStorageGatesCollector(ns),
	}
	reg.MustRegister(m.tables, m.discovered, m.registrations, m.readPool, m.gates,
		m.syncs, m.errors, m.cycleDuration, m.cycles, m.lastSuccessfulCyle, m.storageRequests, m.storageDuration,
		m.catalogRequests, m.catalogDuration, m.buildInfo,
		m.cycleInProgress, m.cycleStartedTs, m.cycleListed, m.cycleDone, m.catalogRetryWaiting)
	m.buildInfo.WithLabelValues(version, goversion).Set(1)
	for _, o := range Outcomes {
		m.syncs.WithLabelValues(o)
	}
	for _, r := range []string{"success", "failure"} {
		m.cycles.WithLabelValues(r)
	}
	return m
}

// RecordRegistration counts one register-phase row by outcome.
func (m *Metrics) RecordRegistration(outcome string) {
	if m == nil {
		return
	}
	m.registrations.WithLabelValues(outcome).Inc()
}

// SetDiscovered publishes how many tables the last discovery found.
func (m *Metrics) SetDiscovered(n int) {
	if m == nil {
		return
	}
	m.discovered.Set(float64(n))
}

// ObserveReadPool exports p, the memory pool every log read of the process
// shares (deltalog.WithMemoryPool): deltasync_log_read_memory_bytes,
// _limit_bytes and _wait_seconds_total. Before it is called they have no
// series.
func (m *Metrics) ObserveReadPool(p *deltalog.MemoryPool) {
	if m == nil {
		return
	}
	m.readPool.pool.Store(p)
}

// readPoolCollector reads a deltalog.MemoryPool at scrape time.
type readPoolCollector struct {
	pool                atomic.Pointer[deltalog.MemoryPool]
	inUse, limit, waits *prometheus.Desc
}

func newReadPoolCollector(ns string) *readPoolCollector {
	return &readPoolCollector{
		inUse: prometheus.NewDesc(ns+"_log_read_memory_bytes",
			"Bytes of log files the process's Delta log reads hold now in their shared memory pool (storage.max_read_mib; each read also within storage.max_load_mib).", nil, nil),
		limit: prometheus.NewDesc(ns+"_log_read_memory_limit_bytes",
			"The shared memory pool's limit (storage.max_read_mib, in bytes); the oldest read is granted beyond it, by at most one storage.max_load_mib.", nil, nil),
		waits: prometheus.NewDesc(ns+"_log_read_memory_wait_seconds_total",
			"Seconds log reads have waited for the shared memory pool (counted as each wait ends); rising fast: many large logs read at once.", nil, nil),
	}
}

func (c *readPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.inUse
	ch <- c.limit
	ch <- c.waits
}

func (c *readPoolCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.pool.Load()
	if p == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(p.InUse()))
	ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(p.Limit()))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, p.WaitTime().Seconds())
}

// ObserveStorageGates exports g, the storage gates every table of the
// process shares (deltalog.WithStorageGates), by bucket:
// deltasync_storage_throttled_total, _throttled_failures_total,
// deltasync_storage_backoff_seconds, _held_seconds and
// deltasync_storage_in_flight_limit (the requests the bucket may have in
// flight now; of two gates sharing a bucket name, the smaller). The
// label is the bucket ("s3://name", "gs://name",
// "azblob://account/container"), never a table or key: one series of
// each per bucket the process has opened a table on. Before it is called
// they have no series.
func (m *Metrics) ObserveStorageGates(g *deltalog.StorageGates) {
	if m == nil {
		return
	}
	m.gates.gates.Store(g)
}

// storageGatesCollector reads deltalog.StorageGates at scrape time.
type storageGatesCollector struct {
	gates                                   atomic.Pointer[deltalog.StorageGates]
	throttled, failed, backoff, held, limit *prometheus.Desc
}

func newStorageGatesCollector(ns string) *storageGatesCollector {
	bucket := []string{"bucket"}
	return &storageGatesCollector{
		throttled: prometheus.NewDesc(ns+"_storage_throttled_total",
			"Throttling answers the bucket's storage requests got (S3 503 SlowDown, GCS 429 or 503, Azure 503, 429 or 500 OperationTimedOut), each retried after the bucket's shared backoff or, past the retries, failed.", bucket, nil),
		failed: prometheus.NewDesc(ns+"_storage_throttled_failures_total",
			"Storage requests of the bucket that were still throttled after the shared backoff's retries and failed (the table's read fails with reason storage).", bucket, nil),
		backoff: prometheus.NewDesc(ns+"_storage_backoff_seconds",
			"The bucket's shared backoff now: the most its requests wait after the next throttling answer (doubled by the first throttled answer of each window of requests, halved by each success); 0: not throttled.", bucket, nil),
		held: prometheus.NewDesc(ns+"_storage_held_seconds",
			"Seconds from now during which no request of the bucket is sent (the backoff drawn, or a Retry-After); 0: not held.", bucket, nil),
		limit: prometheus.NewDesc(ns+"_storage_in_flight_limit",
			"Requests the bucket may have in flight now: storage.max_in_flight_per_bucket until the store throttles it, halved by each throttled window that followed a success, raised by one per limit's worth of successes.", bucket, nil),
	}
}

func (c *storageGatesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.throttled
	ch <- c.failed
	ch <- c.backoff
	ch <- c.held
	ch <- c.limit
}

func (c *storageGatesCollector) Collect(ch chan<- prometheus.Metric) {
	g := c.gates.Load()
	if g == nil {
		return
	}
	for _, b := range g.Throttling() {
		ch <- prometheus.MustNewConstMetric(c.throttled, prometheus.CounterValue, float64(b.Throttled), b.Bucket)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(b.Failed), b.Bucket)
		ch <- prometheus.MustNewConstMetric(c.backoff, prometheus.GaugeValue, b.Backoff.Seconds(), b.Bucket)
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, b.Held.Seconds(), b.Bucket)
		ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(b.InFlightLimit), b.Bucket)
	}
}

// ObserveStorage is a deltalog.Observer: it counts one storage request.
func (m *Metrics) ObserveStorage(op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.storageRequests.WithLabelValues(op, result).Inc()
	m.storageDuration.WithLabelValues(op).Observe(d.Seconds())
}

// ObserveCatalog is a catalog.Observer: it counts one catalog request.
func (m *Metrics) ObserveCatalog(operation string, status int, d time.Duration, _ error) {
	if m == nil {
		return
	}
	code := strconv.Itoa(status)
	if status == 0 {
		code = "error"
	}
	m.catalogRequests.WithLabelValues(operation, code).Inc()
	m.catalogDuration.WithLabelValues(operation).Observe(d.Seconds())
}

// RecordError counts one error by reason (sync.ErrorReason).
func (m *Metrics) RecordError(reason string) {
	if m == nil || reason == "" {
		return
	}
	m.errors.WithLabelValues(reason).Inc()
}

// RecordCycle records one finished cycle.
func (m *Metrics) RecordCycle(d time.Duration, ok bool, end time.Time) {
	if m == nil {
		return
	}
	m.cycleDuration.Observe(d.Seconds())
	if ok {
		m.cycles.WithLabelValues("success").Inc()
		m.lastSuccessfulCyle.Set(float64(end.UnixNano()) / 1e9)
	} else {
		m.cycles.WithLabelValues("failure").Inc()
	}
}

// Outcomes are the outcomes of a reconcile (sync.Outcome) whose
// deltasync_syncs_total series exist from the start, at 0.
var Outcomes = []string{"unchanged", "synced", "flagged", "failed"}

// Table is one table's state after a reconcile, as the per-table series
// publish it (sync.TableStatus).
type Table struct {
	Name    string
	Type    string // MANAGED | EXTERNAL | "" when unknown
	Mode    string // sync | warn
	Status  string // Synced | OutOfSync | Unknown
	Outcome string
	Drift   []plan.DriftKind
	// Held is set while the table's write is held for its destructive
	// changes (on_destructive: hold).
	Held            bool
	LogVersion      *int64
	CatalogVersion  *int64
	LastSync        time.Time // last time seen in sync
	OutOfSyncCycles int
}

// RecordTable publishes one table's state after a reconcile: O(1).
func (m *Metrics) RecordTable(st Table) {
	if m == nil {
		return
	}
	m.syncs.WithLabelValues(st.Outcome).Inc()
	m.tables.record(&st)
}

// ForgetTable drops every per-table series of a table no longer selected.
func (m *Metrics) ForgetTable(name string) {
	if m == nil {
		return
	}
	m.tables.forget(name)
}

// CycleStarted marks a cycle as running since start, its counts at 0.
func (m *Metrics) CycleStarted(start time.Time) {
	if m == nil {
		return
	}
	m.cycleInProgress.Set(1)
	m.cycleStartedTs.Set(float64(start.UnixNano()) / 1e9)
	m.cycleListed.Set(0)
	m.cycleDone.Set(0)
}

// CycleTablesListed counts n more tables the running cycle listed.
func (m *Metrics) CycleTablesListed(n int) {
	if m != nil {
		m.cycleListed.Add(float64(n))
	}
}

// CycleTableDone counts one table of the running cycle done.
func (m *Metrics) CycleTableDone() {
	if m != nil {
		m.cycleDone.Inc()
	}
}

// CycleEnded marks the running cycle ended.
func (m *Metrics) CycleEnded() {
	if m != nil {
		m.cycleInProgress.Set(0)
	}
}

// CatalogRetrySleep is a catalog.RetryPolicy Sleep (the client's waits
// before a retry, for a 429's Retry-After and for max_rps): it waits d (or
// until ctx is done) and counts the request in
// deltasync_catalog_requests_waiting meanwhile.
func (m *Metrics) CatalogRetrySleep(ctx context.Context, d time.Duration) error {
	if m != nil {
		m.catalogRetryWaiting.Inc()
		defer m.catalogRetryWaiting.Dec()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ObserveMetastore is a catalog/hms Options.Observer: it counts one
// metastore call as a catalog request (operation = the Thrift call), with
// the status an HTTP catalog would have answered: 200, 404 (not found),
// 409 (a failed guard), 400 (refused, or a name taken), or "error".
func (m *Metrics) ObserveMetastore(op string, d time.Duration, err error) {
	status := 200
	switch {
	case err == nil:
	case errors.Is(err, catalog.ErrNotFound):
		status = 404
	case errors.Is(err, catalog.ErrConflict):
		status = 409
	case errors.Is(err, catalog.ErrRefused), errors.Is(err, catalog.ErrAlreadyExists):
		status = 400
	default:
		status = 0
	}
	m.ObserveCatalog(op, status, d, err)
}
