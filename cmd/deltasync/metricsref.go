package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/metrics"
	"github.com/deltasync/deltasync/sync/notify"
)

// metricDoc is one metric as the reference shows it.
type metricDoc struct {
	Name, Type, Help string
	Labels           []string
}

// describer keeps the collectors registered on it, so that their
// descriptors can be read without any sample being recorded.
type describer struct{ collectors []prometheus.Collector }

func (d *describer) Register(c prometheus.Collector) error {
	d.collectors = append(d.collectors, c)
	return nil
}

func (d *describer) MustRegister(cs ...prometheus.Collector) {
	d.collectors = append(d.collectors, cs...)
}

func (d *describer) Unregister(prometheus.Collector) bool { return false }

// descFields reads name, help and variable labels out of
// prometheus.Desc.String, the only public view of a descriptor.
var descFields = regexp.MustCompile(`fqName: "([^"]+)", help: "((?:[^"\\]|\\.)*)".*variableLabels: \{([^}]*)\}`)

// daemonMetrics lists every deltasync_* metric the daemon registers: the
// collectors of sync.NewMetrics (as newParts registers them) and of
// events.NewMetrics (registered when events are configured) and
// notify.NewMetrics (when notify is). The Go and
// process collectors are left out: their metrics are the client library's
// and change with the Go release.
func daemonMetrics() ([]metricDoc, error) {
	d := &describer{}
	metrics.New(d, version)
	events.NewMetrics(d)
	notify.NewMetrics(d)
	var out []metricDoc
	for _, c := range d.collectors {
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for desc := range ch {
			m := descFields.FindStringSubmatch(desc.String())
			if m == nil {
				return nil, fmt.Errorf("metrics reference: cannot read descriptor %s", desc)
			}
			var labels []string
			if m[3] != "" {
				labels = strings.Split(m[3], ",")
			}
			out = append(out, metricDoc{Name: m[1], Type: metricType(c, m[1]), Help: strings.ReplaceAll(m[2], `\"`, `"`), Labels: labels})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// metricType is the collector's type: a vector's from its Go type, a
// single metric's from what it writes. Collectors of const metrics, which
// have no type until they collect, follow the exposition's naming rule that
// promlint enforces on this registry: counters, and only they, end in _total.
func metricType(c prometheus.Collector, name string) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	if m, ok := c.(prometheus.Metric); ok {
		var d dto.Metric
		if m.Write(&d) == nil {
			switch {
			case d.Counter != nil:
				return "counter"
			case d.Gauge != nil:
				return "gauge"
			case d.Histogram != nil:
				return "histogram"
			case d.Summary != nil:
				return "summary"
			}
		}
	}
	if strings.HasSuffix(name, "_total") {
		return "counter"
	}
	return "gauge"
}

// metricsReference renders docs/reference/metrics.md.
func metricsReference() (string, error) {
	ms, err := daemonMetrics()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString(`# Metrics reference

Every metric ` + "`deltasync run`" + ` serves on ` + "`/metrics`" + ` (and ` + "`once`" + ` pushes to a Pushgateway), generated
from the collectors the daemon registers (` + "`metrics.New` (sync/metrics), and `events.NewMetrics` when events are" + `
configured). Besides these, the standard ` + "`go_*` and `process_*`" + ` metrics of the Prometheus Go client.
The names are a published contract: they are only ever added to. What they are for, with the
alerts and dashboard built on them: [metrics](../operating/metrics.md), [alerts](../operating/alerts.md).

| metric | type | labels | help |
|---|---|---|---|
`)
	for _, m := range ms {
		labels := ""
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, strings.ReplaceAll(m.Help, "|", `\|`))
	}
	return b.String(), nil
}
