package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestTableHeldSeries: deltasync_table_held is 1 for a table while its
// status says held: destructive, absent for the others; it goes when the
// table is no longer held and when the table is forgotten (left the
// selection); the text scrape writes it as a gather would.
func TestTableHeldSeries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newMetrics(reg, "v", "go")
	h := m.Handler(reg, promhttp.HandlerOpts{})
	m.RecordTable(Table{Name: "c.s.a", Type: "EXTERNAL", Mode: "sync", Status: "OutOfSync", Held: true})
	m.RecordTable(Table{Name: "c.s.b", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	m.RecordTable(Table{Name: `c.s."q"`, Type: "EXTERNAL", Mode: "sync", Status: "OutOfSync", Held: true})
	want := `
# HELP deltasync_table_held ` + heldHelp + `
# TYPE deltasync_table_held gauge
deltasync_table_held{table="c.s.\"q\""} 1
deltasync_table_held{table="c.s.a"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "deltasync_table_held"); err != nil {
		t.Error(err)
	}
	_, body := scrape(t, h, nil)
	if diff := cmp.Diff(encodeGather(t, reg), string(body)); diff != "" {
		t.Errorf("text scrape differs from the gathered exposition (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(body), want[1:]) {
		t.Errorf("text scrape lacks the held series:\n%s", body)
	}

	// a: applied (no longer held); "q": left the selection.
	m.RecordTable(Table{Name: "c.s.a", Type: "EXTERNAL", Mode: "sync", Status: "Synced"})
	m.ForgetTable(`c.s."q"`)
	if n, err := testutil.GatherAndCount(reg, "deltasync_table_held"); err != nil || n != 0 {
		t.Errorf("%d held series (err %v) once no table is held, want 0", n, err)
	}
	_, body = scrape(t, h, nil)
	if strings.Contains(string(body), "deltasync_table_held") {
		t.Errorf("text scrape still has table_held:\n%s", body)
	}
}
