package sync

import (
	"math/bits"
	stdsync "sync"

	"github.com/prometheus/client_golang/prometheus"
)

// tableCollector exports the per-table series (deltasync_table_*) from one
// compact entry per table, built at scrape time. Recording a table is a map
// update, forgetting it a map delete: O(1) whatever the number of tables,
// with no per-series objects kept between scrapes (a GaugeVec keeps one
// metric with its label pairs per series, about a dozen per table, and
// finding a table's old table_info series meant DeletePartialMatch, a walk
// over every series under the vector's lock).
type tableCollector struct {
	info, drift, logVersion, catalogVersion, outOfSync, lastSync *prometheus.Desc

	mu     stdsync.Mutex
	tables map[string]*tableSeries
}

// tableSeries is what one table exports.
type tableSeries struct {
	typ, mode, status string
	drift             uint8 // bit i set: driftKinds[i] differs
	has               uint8 // hasLogVersion | hasCatalogVersion | hasLastSync
	logVersion        int64
	catalogVersion    int64
	outOfSync         int
	lastSync          float64
}

const (
	hasLogVersion = 1 << iota
	hasCatalogVersion
	hasLastSync
)

func newTableCollector(ns string) *tableCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, labels, nil)
	}
	return &tableCollector{
		info: d("table_info", "Always 1; labels describe each selected table and its sync status (Synced, OutOfSync, Unknown).",
			"table", "table_type", "mode", "sync_status"),
		drift:          d("table_drift", "1 when the catalog differs from the log in this kind of metadata, else 0.", "table", "kind"),
		logVersion:     d("table_log_version", "Latest Delta log version read for the table.", "table"),
		catalogVersion: d("table_catalog_version", "Log version the catalog records as synced (delta.lastUpdateVersion).", "table"),
		outOfSync:      d("table_out_of_sync_cycles", "Consecutive cycles the table has been OutOfSync or Unknown.", "table"),
		lastSync:       d("table_last_sync_timestamp_seconds", "Unix time the table was last seen in sync (unchanged or synced).", "table"),
		tables:         map[string]*tableSeries{},
	}
}

// record stores a table's state; a version left nil keeps the last one seen.
func (c *tableCollector) record(st *TableStatus) {
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
	s, ok := c.tables[st.Table]
	if !ok {
		s = &tableSeries{}
		c.tables[st.Table] = s
	}
	s.typ, s.mode, s.status, s.drift = st.Type, string(st.Mode), string(st.Status), drift
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
}

// forget drops every series of the table at once.
func (c *tableCollector) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tables, name)
}

// Describe implements prometheus.Collector.
func (c *tableCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.drift, c.logVersion, c.catalogVersion, c.outOfSync, c.lastSync} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The entries are copied under the
// lock and turned into metrics outside it, so a scrape never holds up the
// workers for longer than a copy.
func (c *tableCollector) Collect(ch chan<- prometheus.Metric) {
	type entry struct {
		name string
		tableSeries
	}
	c.mu.Lock()
	all := make([]entry, 0, len(c.tables))
	for name, s := range c.tables {
		all = append(all, entry{name, *s})
	}
	c.mu.Unlock()
	g := prometheus.GaugeValue
	for _, e := range all {
		ch <- prometheus.MustNewConstMetric(c.info, g, 1, e.name, e.typ, e.mode, e.status)
		for i, k := range driftKinds {
			ch <- prometheus.MustNewConstMetric(c.drift, g, float64(bits.OnesCount8(e.drift&(1<<i))), e.name, string(k))
		}
		if e.has&hasLogVersion != 0 {
			ch <- prometheus.MustNewConstMetric(c.logVersion, g, float64(e.logVersion), e.name)
		}
		if e.has&hasCatalogVersion != 0 {
			ch <- prometheus.MustNewConstMetric(c.catalogVersion, g, float64(e.catalogVersion), e.name)
		}
		ch <- prometheus.MustNewConstMetric(c.outOfSync, g, float64(e.outOfSync), e.name)
		if e.has&hasLastSync != 0 {
			ch <- prometheus.MustNewConstMetric(c.lastSync, g, e.lastSync, e.name)
		}
	}
}
