package sync

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	stdsync "sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Handler serves g (a registry holding these Metrics) on /metrics. The
// per-table series are written straight from the reconciler's state in the
// text format, one table at a time, instead of being gathered: client_golang
// gathers every series of a registry into memory before writing any, which
// at 50,000 tables was ~70 MiB live per scrape (1.4 KiB per table, even with
// the shared label pairs of tableCollector). The other families go through
// the registry and expfmt as before. A scrape that negotiates another
// format (protobuf) is served by promhttp from a full gather. Text scrapes
// may run together; a protobuf one waits for them and they for it, since
// it needs the table collector unmuted.
func (m *Metrics) Handler(g prometheus.Gatherer, opts promhttp.HandlerOpts) http.Handler {
	full := promhttp.HandlerFor(g, opts)
	var mu stdsync.RWMutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...) // as promhttp without OpenMetrics
		if m == nil || format.FormatType() != expfmt.TypeTextPlain {
			mu.Lock()
			defer mu.Unlock()
			full.ServeHTTP(w, r)
			return
		}
		mu.RLock()
		defer mu.RUnlock()
		m.tables.streaming.Add(1)
		mfs, err := g.Gather()
		m.tables.streaming.Add(-1)
		if err != nil {
			http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", string(format))
		var out io.Writer = w
		if !opts.DisableCompression && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		bw := bufio.NewWriterSize(out, 32<<10)
		enc := expfmt.NewEncoder(bw, format)
		first := prometheus.BuildFQName("deltasync", "", "table_") // where the table families sort
		i := 0
		for ; i < len(mfs) && mfs[i].GetName() < first; i++ {
			if err := enc.Encode(mfs[i]); err != nil {
				return
			}
		}
		if err := m.tables.writeText(bw); err != nil {
			return
		}
		for ; i < len(mfs); i++ {
			if err := enc.Encode(mfs[i]); err != nil {
				return
			}
		}
		_ = bw.Flush()
	})
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// textRow is one table's state as a text scrape copies it.
type textRow struct {
	name, typ, mode, status    string
	drift, has                 uint8
	logVersion, catalogVersion int64
	outOfSync                  int
	lastSync                   float64
}

// writeText writes the per-table families in the text exposition format,
// in the order and form the registry and expfmt would (TestMetricsHandler
// compares the two byte for byte): families by name, series by their
// label values in label-name order, families without series left out.
func (c *tableCollector) writeText(w *bufio.Writer) error {
	c.mu.Lock()
	rows := make([]textRow, 0, len(c.tables))
	for _, s := range c.tables {
		rows = append(rows, textRow{name: s.name, typ: s.typ, mode: s.mode, status: s.status, drift: s.drift,
			has: s.has, logVersion: s.logVersion, catalogVersion: s.catalogVersion, outOfSync: s.outOfSync, lastSync: s.lastSync})
	}
	c.mu.Unlock()
	slices.SortFunc(rows, func(a, b textRow) int { return strings.Compare(a.name, b.name) })

	gauge := func(name, help string, has func(*textRow) bool, write func(*textRow)) {
		n := 0
		for i := range rows {
			if has(&rows[i]) {
				n++
			}
		}
		if n == 0 {
			return
		}
		writeHeader(w, name, help)
		for i := range rows {
			if has(&rows[i]) {
				write(&rows[i])
			}
		}
	}
	byTable := func(name string, v float64, table string) {
		w.WriteString(name)
		w.WriteString(`{table="`)
		writeLabelValue(w, table)
		w.WriteString(`"} `)
		writeFloat(w, v)
		w.WriteByte('\n')
	}
	const ns = "deltasync_"
	// deltasync_table_catalog_version
	gauge(ns+"table_catalog_version", catalogVersionHelp,
		func(s *textRow) bool { return s.has&hasCatalogVersion != 0 },
		func(s *textRow) { byTable(ns+"table_catalog_version", float64(s.catalogVersion), s.name) })
	// deltasync_table_drift: by kind, then table.
	if slices.ContainsFunc(rows, func(s textRow) bool { return s.drift != 0 }) {
		writeHeader(w, ns+"table_drift", driftHelp)
		kinds := make([]int, len(driftKinds))
		for i := range kinds {
			kinds[i] = i
		}
		slices.SortFunc(kinds, func(a, b int) int { return strings.Compare(string(driftKinds[a]), string(driftKinds[b])) })
		for _, k := range kinds {
			for i := range rows {
				if rows[i].drift&(1<<k) == 0 {
					continue
				}
				w.WriteString(ns + `table_drift{kind="`)
				writeLabelValue(w, string(driftKinds[k]))
				w.WriteString(`",table="`)
				writeLabelValue(w, rows[i].name)
				w.WriteString("\"} 1\n")
			}
		}
	}
	// deltasync_table_info: by mode, sync_status, table, table_type.
	if len(rows) > 0 {
		order := make([]int32, len(rows))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(i, j int32) int {
			a, b := &rows[i], &rows[j]
			if c := strings.Compare(a.mode, b.mode); c != 0 {
				return c
			}
			if c := strings.Compare(a.status, b.status); c != 0 {
				return c
			}
			if c := strings.Compare(a.name, b.name); c != 0 {
				return c
			}
			return strings.Compare(a.typ, b.typ)
		})
		writeHeader(w, ns+"table_info", infoHelp)
		for _, i := range order {
			s := &rows[i]
			w.WriteString(ns + `table_info{mode="`)
			writeLabelValue(w, s.mode)
			w.WriteString(`",sync_status="`)
			writeLabelValue(w, s.status)
			w.WriteString(`",table="`)
			writeLabelValue(w, s.name)
			w.WriteString(`",table_type="`)
			writeLabelValue(w, labelValue(s.typ))
			w.WriteString("\"} 1\n")
		}
	}
	gauge(ns+"table_last_sync_timestamp_seconds", lastSyncHelp,
		func(s *textRow) bool { return s.has&hasLastSync != 0 },
		func(s *textRow) { byTable(ns+"table_last_sync_timestamp_seconds", s.lastSync, s.name) })
	gauge(ns+"table_log_version", logVersionHelp,
		func(s *textRow) bool { return s.has&hasLogVersion != 0 },
		func(s *textRow) { byTable(ns+"table_log_version", float64(s.logVersion), s.name) })
	gauge(ns+"table_out_of_sync_cycles", outOfSyncHelp,
		func(*textRow) bool { return true },
		func(s *textRow) { byTable(ns+"table_out_of_sync_cycles", float64(s.outOfSync), s.name) })
	return w.Flush()
}

// writeHeader writes a gauge family's HELP and TYPE lines.
func writeHeader(w *bufio.Writer, name, help string) {
	w.WriteString("# HELP ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(helpEscaper.Replace(help))
	w.WriteString("\n# TYPE ")
	w.WriteString(name)
	w.WriteString(" gauge\n")
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// writeLabelValue writes v escaped as the text format wants a label value.
func writeLabelValue(w *bufio.Writer, v string) {
	if !strings.ContainsAny(v, "\\\"\n") {
		w.WriteString(v)
		return
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			w.WriteString(`\\`)
		case '"':
			w.WriteString(`\"`)
		case '\n':
			w.WriteString(`\n`)
		default:
			w.WriteByte(v[i])
		}
	}
}

// writeFloat writes v as expfmt does.
func writeFloat(w *bufio.Writer, v float64) {
	var buf [32]byte
	switch v {
	case 1:
		w.WriteByte('1')
	case 0:
		w.WriteByte('0')
	case -1:
		w.WriteString("-1")
	default:
		w.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
	}
}
