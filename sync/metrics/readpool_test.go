package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/deltasync/deltasync/deltalog"
)

// TestReadPoolSeries: the log-read memory pool's series exist once the
// daemon hands its pool over (none before: a registry without a pool has
// nothing to say about one), with its limit, bytes in use and waits, and
// the text scrape writes them as a gather would.
func TestReadPoolSeries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	names := []string{"deltasync_log_read_memory_bytes", "deltasync_log_read_memory_limit_bytes", "deltasync_log_read_memory_wait_seconds_total"}
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 0 {
		t.Fatalf("%d pool series (err %v) before a pool is given, want 0", n, err)
	}
	m.ObserveReadPool(deltalog.NewMemoryPool(64 << 20))
	want := `
# HELP deltasync_log_read_memory_bytes Bytes of log files the process's Delta log reads hold now in their shared memory pool (storage.max_read_mib; each read also within storage.max_load_mib).
# TYPE deltasync_log_read_memory_bytes gauge
deltasync_log_read_memory_bytes 0
# HELP deltasync_log_read_memory_limit_bytes The shared memory pool's limit (storage.max_read_mib, in bytes); the oldest read is granted beyond it, by at most one storage.max_load_mib.
# TYPE deltasync_log_read_memory_limit_bytes gauge
deltasync_log_read_memory_limit_bytes 6.7108864e+07
# HELP deltasync_log_read_memory_wait_seconds_total Seconds log reads have waited for the shared memory pool (counted as each wait ends); rising fast: many large logs read at once.
# TYPE deltasync_log_read_memory_wait_seconds_total counter
deltasync_log_read_memory_wait_seconds_total 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	_, body := scrape(t, m.Handler(reg, promhttp.HandlerOpts{}), nil)
	if diff := cmp.Diff(encodeGather(t, reg), string(body)); diff != "" {
		t.Errorf("text scrape differs from the gathered exposition (-want +got):\n%s", diff)
	}
}
