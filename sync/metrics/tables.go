package metrics

import (
	"math/bits"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/deltasync/deltasync/sync/plan"
)

// tableCollector exports the per-table series (deltasync_table_*) from one
// compact entry per table, built at scrape time. Recording a table is a map
// update, forgetting it a map delete: O(1) whatever the number of tables,
// with no per-series objects kept between scrapes (a GaugeVec keeps one
// metric with its label pairs per series, and finding a table's old
// table_info series meant DeletePartialMatch, a walk over every series
// under the vector's lock).
//
// A scrape is what a fleet pays for these series: every series becomes a
// dto.Metric that lives until the exposition is written (client_golang has
// no streaming gather). So each table exports only what carries
// information: table_drift only for the kinds that differ (an in-sync table
// has none; `sum by (kind)` and `> 0` read the same), and the label pairs
// are built once per table and shared by every scrape instead of being
// validated, allocated and sorted per series (prometheus.MustNewConstMetric).
type tableCollector struct {
	families                                                     tableFamilies
	info, drift, logVersion, catalogVersion, outOfSync, lastSync *prometheus.Desc
	held                                                         *prometheus.Desc

	mu     stdsync.Mutex
	tables map[string]*tableSeries
	// streaming > 0: a text scrape (Metrics.Handler) writes these series
	// itself, so Collect yields none to the registry's gather.
	streaming atomic.Int32
	// pairs interns the label pairs of the few values table_type, mode,
	// sync_status and kind take; guarded by mu.
	pairs map[[2]string]*dto.LabelPair
}

// tableValues is what one table exports, as plain values (a text scrape
// copies these).
type tableValues struct {
	name              string
	typ, mode, status string
	drift             uint8 // bit i set: driftKinds[i] differs
	has               uint8 // hasLogVersion | hasCatalogVersion | hasLastSync | hasHeld
	logVersion        int64
	catalogVersion    int64
	outOfSync         int
	lastSync          float64
}

// tableSeries is one table's values and the label pairs a gather hands out.
type tableSeries struct {
	tableValues
	// byTable is {table}, infoLabels {mode, sync_status, table, table_type}:
	// sorted by name as the exposition wants them, never modified once
	// built (a scrape hands them out), rebuilt when a value changes.
	byTable, infoLabels []*dto.LabelPair
	// tablePair and the arrays back the first byTable and infoLabels, so
	// that a table's series are one allocation, not four; byTable never
	// changes, and infoLabels gets a new array when a value does.
	tablePair    dto.LabelPair
	byTableArray [1]*dto.LabelPair
	infoArray    [4]*dto.LabelPair
}

// tableFamilies are the per-table families' full names.
type tableFamilies struct {
	prefix                                                       string // they all start with it, and only they
	catalogVersion, drift, info, lastSync, logVersion, outOfSync string
	held                                                         string
}

const (
	hasLogVersion = 1 << iota
	hasCatalogVersion
	hasLastSync
	// hasHeld: the table's update is held for its destructive changes
	// (TableStatus.Held); table_held is 1, and absent otherwise.
	hasHeld
)

// Label names, addressable for dto.LabelPair.
var (
	labelTable     = "table"
	labelTableType = "table_type"
	labelMode      = "mode"
	labelStatus    = "sync_status"
	labelKind      = "kind"
)

// The per-table families' help texts (the registry's and the text scrape's).
const (
	infoHelp           = "Always 1; labels describe each selected table and its sync status (Synced, OutOfSync, Unknown)."
	driftHelp          = "1 when the catalog differs from the log in this kind of metadata; kinds without drift have no series."
	logVersionHelp     = "Latest Delta log version read for the table."
	catalogVersionHelp = "Log version the catalog records as synced (delta.lastUpdateVersion)."
	outOfSyncHelp      = "Consecutive cycles the table has been OutOfSync or Unknown."
	lastSyncHelp       = "Unix time the table was last seen in sync (unchanged or synced)."
	heldHelp           = "1 while the table's update is held for its destructive changes (on_destructive: hold, held: destructive); tables not held have no series."
)

func newTableCollector(ns string) *tableCollector {
	name := func(n string) string { return prometheus.BuildFQName(ns, "", n) }
	f := tableFamilies{prefix: name("table_"), catalogVersion: name("table_catalog_version"), drift: name("table_drift"),
		info: name("table_info"), lastSync: name("table_last_sync_timestamp_seconds"), logVersion: name("table_log_version"),
		outOfSync: name("table_out_of_sync_cycles"), held: name("table_held")}
	d := func(fq, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(fq, help, labels, nil)
	}
	return &tableCollector{
		families:       f,
		info:           d(f.info, infoHelp, labelTable, labelTableType, labelMode, labelStatus),
		drift:          d(f.drift, driftHelp, labelTable, labelKind),
		logVersion:     d(f.logVersion, logVersionHelp, labelTable),
		catalogVersion: d(f.catalogVersion, catalogVersionHelp, labelTable),
		outOfSync:      d(f.outOfSync, outOfSyncHelp, labelTable),
		lastSync:       d(f.lastSync, lastSyncHelp, labelTable),
		held:           d(f.held, heldHelp, labelTable),
		tables:         map[string]*tableSeries{},
		pairs:          map[[2]string]*dto.LabelPair{},
	}
}

// pair returns the shared label pair name=value; c.mu must be held.
func (c *tableCollector) pair(name *string, value string) *dto.LabelPair {
	k := [2]string{*name, value}
	p, ok := c.pairs[k]
	if !ok {
		p = &dto.LabelPair{Name: name, Value: &k[1]}
		c.pairs[k] = p
	}
	return p
}

// labelValue makes s a valid label value: the registry refuses a scrape
// holding invalid UTF-8, and a catalog may name a table with any bytes.
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// record stores a table's state; a version left nil keeps the last one seen.
func (c *tableCollector) record(st *Table) {
	var drift uint8
	for _, k := range st.Drift {
		for i, dk := range driftKinds {
			if k == dk {
				drift |= 1 << i
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.tables[st.Name]
	if !ok {
		s = &tableSeries{tableValues: tableValues{name: labelValue(st.Name)}}
		s.tablePair.Name, s.tablePair.Value = &labelTable, &s.name
		s.byTableArray[0] = &s.tablePair
		s.byTable = s.byTableArray[:]
		c.tables[st.Name] = s
	}
	if s.infoLabels == nil || s.typ != st.Type || s.mode != st.Mode || s.status != st.Status {
		s.typ, s.mode, s.status = st.Type, st.Mode, st.Status
		info := [4]*dto.LabelPair{c.pair(&labelMode, labelValue(s.mode)), c.pair(&labelStatus, labelValue(s.status)),
			s.byTable[0], c.pair(&labelTableType, labelValue(s.typ))}
		if s.infoLabels == nil {
			// The first: no scrape has been handed the array yet.
			s.infoArray = info
			s.infoLabels = s.infoArray[:]
		} else {
			fresh := info // a scrape may still be reading the old one
			s.infoLabels = fresh[:]
		}
	}
	s.drift = drift
	if st.LogVersion != nil {
		s.logVersion, s.has = *st.LogVersion, s.has|hasLogVersion
	}
	if st.CatalogVersion != nil {
		s.catalogVersion, s.has = *st.CatalogVersion, s.has|hasCatalogVersion
	}
	s.outOfSync = st.OutOfSyncCycles
	if !st.LastSync.IsZero() {
		s.lastSync, s.has = float64(st.LastSync.UnixNano())/1e9, s.has|hasLastSync
	}
	if st.Held {
		s.has |= hasHeld
	} else {
		s.has &^= hasHeld
	}
}

// forget drops every series of the table at once.
func (c *tableCollector) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tables, name)
}

// Describe implements prometheus.Collector.
func (c *tableCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.drift, c.logVersion, c.catalogVersion, c.outOfSync, c.lastSync, c.held} {
		ch <- d
	}
}

// tableMetric is one per-table gauge sample as a scrape sees it.
type tableMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	gauge  dto.Gauge
}

// Desc implements prometheus.Metric.
func (m *tableMetric) Desc() *prometheus.Desc { return m.desc }

// Write implements prometheus.Metric. The label pairs are shared between
// scrapes; the registry and the encoders only read them.
func (m *tableMetric) Write(out *dto.Metric) error {
	m.gauge.Value = &m.value
	out.Label, out.Gauge = m.labels, &m.gauge
	return nil
}

// Collect implements prometheus.Collector. The samples are built under the
// lock into one slice (one allocation per scrape, not several per series)
// and sent outside it, so a scrape never holds up the workers for longer
// than that copy.
func (c *tableCollector) Collect(ch chan<- prometheus.Metric) {
	if c.streaming.Load() > 0 {
		return
	}
	c.mu.Lock()
	n := 0
	for _, s := range c.tables {
		n += 2 + bits.OnesCount8(s.drift) + bits.OnesCount8(s.has) // info, out_of_sync, drifts, versions, last sync
	}
	ms := make([]tableMetric, 0, n)
	add := func(d *prometheus.Desc, labels []*dto.LabelPair, v float64) {
		ms = append(ms, tableMetric{desc: d, labels: labels, value: v})
	}
	for _, s := range c.tables {
		add(c.info, s.infoLabels, 1)
		for i, k := range driftKinds {
			if s.drift&(1<<i) != 0 { // sorted: kind, table
				add(c.drift, []*dto.LabelPair{c.pair(&labelKind, string(k)), s.byTable[0]}, 1)
			}
		}
		if s.has&hasLogVersion != 0 {
			add(c.logVersion, s.byTable, float64(s.logVersion))
		}
		if s.has&hasCatalogVersion != 0 {
			add(c.catalogVersion, s.byTable, float64(s.catalogVersion))
		}
		add(c.outOfSync, s.byTable, float64(s.outOfSync))
		if s.has&hasLastSync != 0 {
			add(c.lastSync, s.byTable, s.lastSync)
		}
		if s.has&hasHeld != 0 {
			add(c.held, s.byTable, 1)
		}
	}
	c.mu.Unlock()
	for i := range ms {
		ch <- &ms[i]
	}
}

// driftKinds are the label values of deltasync_table_drift; a table has a
// series (1) for each kind that differs and none for the others.
var driftKinds = []plan.DriftKind{plan.KindSchema, plan.KindPartitioning, plan.KindClustering, plan.KindProtocol, plan.KindProperties, plan.KindComment, plan.KindLocation, plan.KindUniform}
