package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// metricKind is a Prometheus metric type, as far as the checks care.
type metricKind int

const (
	gauge metricKind = iota
	counter
	histogram
)

type metricSpec struct {
	kind   metricKind
	labels []string
}

// contractMetrics is THE list the alerts and the dashboard are written
// against: the "Metric names" section of the team contract, with each
// metric's label names. It must match what sync.NewMetrics registers —
// TestContractMatchesSync checks exactly that — so when sync adds a metric,
// add it here too (names are only ever added, never renamed).
func contractMetrics() map[string]metricSpec {
	return map[string]metricSpec{
		"deltasync_table_info":                              {gauge, []string{"table", "table_type", "mode", "sync_status"}},
		"deltasync_table_drift":                             {gauge, []string{"table", "kind"}},
		"deltasync_table_log_version":                       {gauge, []string{"table"}},
		"deltasync_table_catalog_version":                   {gauge, []string{"table"}},
		"deltasync_table_out_of_sync_cycles":                {gauge, []string{"table"}},
		"deltasync_table_last_sync_timestamp_seconds":       {gauge, []string{"table"}},
		"deltasync_table_held":                              {gauge, []string{"table"}},
		"deltasync_syncs_total":                             {counter, []string{"outcome"}},
		"deltasync_errors_total":                            {counter, []string{"reason"}},
		"deltasync_cycle_duration_seconds":                  {histogram, nil},
		"deltasync_cycles_total":                            {counter, []string{"result"}},
		"deltasync_last_successful_cycle_timestamp_seconds": {gauge, nil},
		"deltasync_storage_requests_total":                  {counter, []string{"op", "result"}},
		"deltasync_storage_request_duration_seconds":        {histogram, []string{"op"}},
		"deltasync_catalog_requests_total":                  {counter, []string{"operation", "code"}},
		"deltasync_catalog_request_duration_seconds":        {histogram, []string{"operation"}},
		"deltasync_build_info":                              {gauge, []string{"version", "goversion"}},
		// The running cycle, before it ends (what /readyz also shows).
		"deltasync_cycle_in_progress":               {gauge, nil},
		"deltasync_cycle_started_timestamp_seconds": {gauge, nil},
		"deltasync_cycle_tables_listed":             {gauge, nil},
		"deltasync_cycle_tables_done":               {gauge, nil},
		"deltasync_catalog_requests_waiting":        {gauge, nil},
		// The log reads' shared memory pool (storage.max_read_mib).
		"deltasync_log_read_memory_bytes":              {gauge, nil},
		"deltasync_log_read_memory_limit_bytes":        {gauge, nil},
		"deltasync_log_read_memory_wait_seconds_total": {counter, nil},
		// Each bucket's throttling (the storage gates' shared backoff).
		"deltasync_storage_throttled_total":          {counter, []string{"bucket"}},
		"deltasync_storage_throttled_failures_total": {counter, []string{"bucket"}},
		"deltasync_storage_backoff_seconds":          {gauge, []string{"bucket"}},
		"deltasync_storage_held_seconds":             {gauge, []string{"bucket"}},
		"deltasync_storage_in_flight_limit":          {gauge, []string{"bucket"}},
		// Event-driven sync (registered only when events are configured).
		"deltasync_events_received_total":             {counter, []string{"subscription"}},
		"deltasync_events_matched_total":              {counter, nil},
		"deltasync_events_unmatched_total":            {counter, []string{"reason"}},
		"deltasync_events_poison_total":               {counter, nil},
		"deltasync_events_expired_total":              {counter, nil},
		"deltasync_events_pending_tables":             {gauge, nil},
		"deltasync_event_lag_seconds":                 {histogram, nil},
		"deltasync_event_subscription_up":             {gauge, []string{"subscription"}},
		"deltasync_event_subscription_failures_total": {counter, []string{"subscription"}},
		"deltasync_log_reads_skipped_total":           {counter, nil},
		// Change events (registered only when notify is configured).
		"deltasync_notify_delivered_total": {counter, []string{"sink"}},
		"deltasync_notify_failed_total":    {counter, []string{"sink"}},
		"deltasync_notify_dropped_total":   {counter, []string{"sink", "reason"}},
		"deltasync_notify_queue_depth":     {gauge, []string{"sink"}},
		// Registration (register rules).
		"deltasync_tables_discovered":   {gauge, nil},
		"deltasync_registrations_total": {counter, []string{"outcome"}},
	}
}

// targetLabels are added by Prometheus at scrape time, so any series has them.
var targetLabels = []string{"job", "instance", "namespace", "pod", "container", "service", "endpoint"}

// resolveSeries maps a series name used in a query to its contract metric:
// histogram series carry _bucket/_sum/_count, and _bucket adds "le".
func resolveSeries(name string) (metric string, extra []string, ok bool) {
	all := contractMetrics()
	if _, ok := all[name]; ok {
		return name, nil, true
	}
	for suffix, lbl := range map[string][]string{"_bucket": {"le"}, "_sum": nil, "_count": nil} {
		base, found := strings.CutSuffix(name, suffix)
		if spec, ok := all[base]; found && ok && spec.kind == histogram {
			return base, lbl, true
		}
	}
	return "", nil, false
}

var (
	seriesNameRE = regexp.MustCompile(`\bdeltasync_[a-zA-Z0-9_]+`)
	selectorRE   = regexp.MustCompile(`\b(deltasync_[a-zA-Z0-9_]+)\s*\{([^}]*)\}`)
	matcherRE    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	groupingRE   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
)

// checkQuery reports every deltasync series in a PromQL expression that is
// not in the contract, and every label matched on or grouped by that no
// metric in the expression carries.
func checkQuery(expr string) []string {
	var problems []string
	known := map[string]bool{"le": false}
	for _, l := range targetLabels {
		known[l] = true
	}
	for _, name := range seriesNameRE.FindAllString(expr, -1) {
		metric, extra, ok := resolveSeries(name)
		if !ok {
			problems = append(problems, "unknown metric "+name)
			continue
		}
		for _, l := range append(contractMetrics()[metric].labels, extra...) {
			known[l] = true
		}
	}
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		metric, extra, ok := resolveSeries(m[1])
		if !ok {
			continue
		}
		labels := append(append([]string{}, contractMetrics()[metric].labels...), extra...)
		labels = append(labels, targetLabels...)
		for _, lm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
			if !contains(labels, lm[1]) {
				problems = append(problems, m[1]+" has no label "+lm[1])
			}
		}
	}
	for _, g := range groupingRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !known[l] {
				problems = append(problems, "grouping by unknown label "+l)
			}
		}
	}
	return problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCheckQuery(t *testing.T) {
	tests := []struct {
		expr string
		want int
	}{
		{`sum by (reason) (rate(deltasync_errors_total{reason="catalog"}[5m]))`, 0},
		{`histogram_quantile(0.9, sum by (le, op) (rate(deltasync_storage_request_duration_seconds_bucket[5m])))`, 0},
		{`deltasync_errors_total{outcome="failed"}`, 1},                 // wrong label
		{`rate(deltasync_sync_total[5m])`, 1},                           // misspelt metric
		{`sum by (le) (rate(deltasync_syncs_total_bucket[5m]))`, 2},     // not a histogram; le unknown
		{`sum by (table) (deltasync_cycles_total{job="deltasync"})`, 1}, // no table label
	}
	for _, tt := range tests {
		if got := checkQuery(tt.expr); len(got) != tt.want {
			t.Errorf("checkQuery(%s) = %q, want %d problems", tt.expr, got, tt.want)
		}
	}
}

// TestContractMatchesSync runs internal/metricnames, which registers sync's
// metrics on a recording registerer and prints their names and labels, and
// compares that with contractMetrics.
func TestContractMatchesSync(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sync package; skipped with -short")
	}
	cmd := exec.Command("go", "run", "-tags", lightTags, "./internal/metricnames")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./internal/metricnames: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, labels, _ := strings.Cut(line, " ")
		var ls []string
		if labels != "" {
			ls = strings.Split(labels, ",")
		}
		sort.Strings(ls)
		got[name] = ls
	}
	want := map[string][]string{}
	for name, spec := range contractMetrics() {
		ls := append([]string{}, spec.labels...)
		sort.Strings(ls)
		want[name] = ls
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("contract metrics (-want, this test's list) vs sync.NewMetrics (+got):\n%s", diff)
	}
}
