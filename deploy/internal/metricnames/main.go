package main

import (
	"fmt"
	"os"
	"regexp"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/metrics"
	"github.com/deltasync/deltasync/sync/notify"
)

// recorder is a prometheus.Registerer that keeps the collectors it is given.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// descRE reads the name and variable labels out of prometheus.Desc.String,
// the only public view of a descriptor.
var descRE = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

func main() {
	rec := &recorder{}
	metrics.New(rec, "test")
	events.NewMetrics(rec) // registered only when events are configured
	notify.NewMetrics(rec) // registered only when notify is configured
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range rec.collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	var lines []string
	for d := range ch {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			fmt.Fprintf(os.Stderr, "metricnames: cannot read %s\n", d)
			os.Exit(1)
		}
		lines = append(lines, m[1]+" "+m[2])
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}
