package metrics

import (
	"bufio"
	"cmp"
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
		i := 0 // the registry's families sort by name; the table ones go where theirs would
		for ; i < len(mfs) && mfs[i].GetName() < m.tables.families.prefix; i++ {
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

// writeText writes the per-table families in the text exposition format,
// in the order and form the registry and expfmt would
// (TestMetricsHandlerMatchesGather compares the two byte for byte):
// families by name, series by their label values in label-name order,
// families without series left out.
func (c *tableCollector) writeText(w *bufio.Writer) error {
	c.mu.Lock()
	rows := make([]tableValues, 0, len(c.tables))
	for _, s := range c.tables {
		rows = append(rows, s.tableValues)
	}
	c.mu.Unlock()
	slices.SortFunc(rows, func(a, b tableValues) int { return strings.Compare(a.name, b.name) })
	f := &c.families
	writeByTable(w, rows, f.catalogVersion, catalogVersionHelp,
		func(s *tableValues) (float64, bool) { return float64(s.catalogVersion), s.has&hasCatalogVersion != 0 })
	writeDrift(w, rows, f.drift)
	writeByTable(w, rows, f.held, heldHelp,
		func(s *tableValues) (float64, bool) { return 1, s.has&hasHeld != 0 })
	writeInfo(w, rows, f.info)
	writeByTable(w, rows, f.lastSync, lastSyncHelp,
		func(s *tableValues) (float64, bool) { return s.lastSync, s.has&hasLastSync != 0 })
	writeByTable(w, rows, f.logVersion, logVersionHelp,
		func(s *tableValues) (float64, bool) { return float64(s.logVersion), s.has&hasLogVersion != 0 })
	writeByTable(w, rows, f.outOfSync, outOfSyncHelp,
		func(s *tableValues) (float64, bool) { return float64(s.outOfSync), true })
	return w.Flush()
}

// writeByTable writes a family labelled by table only, rows sorted by name.
func writeByTable(w *bufio.Writer, rows []tableValues, name, help string, value func(*tableValues) (float64, bool)) {
	header := false
	for i := range rows {
		v, ok := value(&rows[i])
		if !ok {
			continue
		}
		if !header {
			writeHeader(w, name, help)
			header = true
		}
		w.WriteString(name)
		w.WriteString(`{table="`)
		writeLabelValue(w, rows[i].name)
		w.WriteString(`"} `)
		writeFloat(w, v)
		w.WriteByte('\n')
	}
}

// driftKindsByName are the indexes of driftKinds in the order of their
// names (the kind label sorts table_drift's series before table does).
var driftKindsByName = func() []int {
	idx := make([]int, len(driftKinds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(string(driftKinds[a]), string(driftKinds[b])) })
	return idx
}()

// writeDrift writes table_drift: one series per kind that differs, by kind
// then table.
func writeDrift(w *bufio.Writer, rows []tableValues, name string) {
	header := false
	for _, k := range driftKindsByName {
		for i := range rows {
			if rows[i].drift&(1<<k) == 0 {
				continue
			}
			if !header {
				writeHeader(w, name, driftHelp)
				header = true
			}
			w.WriteString(name)
			w.WriteString(`{kind="`)
			writeLabelValue(w, string(driftKinds[k]))
			w.WriteString(`",table="`)
			writeLabelValue(w, rows[i].name)
			w.WriteString("\"} 1\n")
		}
	}
}

// writeInfo writes table_info, by mode, sync_status, table, table_type.
func writeInfo(w *bufio.Writer, rows []tableValues, name string) {
	if len(rows) == 0 {
		return
	}
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &rows[i], &rows[j]
		return cmp.Or(strings.Compare(a.mode, b.mode), strings.Compare(a.status, b.status),
			strings.Compare(a.name, b.name), strings.Compare(a.typ, b.typ))
	})
	writeHeader(w, name, infoHelp)
	for _, i := range order {
		s := &rows[i]
		w.WriteString(name)
		w.WriteString(`{mode="`)
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
