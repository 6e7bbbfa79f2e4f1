package metrics

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/deltasync/deltasync/sync/plan"
)

// scrape GETs /metrics from h with the given request headers. A failed
// scrape is reported with t.Errorf (it may run on another goroutine) and
// returns a nil body.
func scrape(t *testing.T, h http.Handler, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics: %d %s %v", resp.StatusCode, body, err)
		return resp, nil
	}
	return resp, body
}

// protobufTableInfos scrapes h asking for the protobuf format and returns
// how many deltasync_table_info series it got (-1 when the scrape failed).
func protobufTableInfos(t *testing.T, h http.Handler) int {
	t.Helper()
	resp, body := scrape(t, h, map[string]string{"Accept": "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"})
	if body == nil {
		return -1
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.ResponseFormat(resp.Header))
	infos := 0
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if err != io.EOF {
				t.Errorf("decoding the protobuf scrape: %v", err)
				return -1
			}
			return infos
		}
		if mf.GetName() == "deltasync_table_info" {
			infos = len(mf.GetMetric())
		}
	}
}

// encodeGather is the exposition promhttp writes in the text format.
func encodeGather(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

// TestMetricsHandlerMatchesGather: the text scrape, which writes the
// per-table series itself, is byte for byte what a full gather encoded by
// expfmt gives (the golden exposition), also for table names that need
// escaping or are not UTF-8, drift of several kinds and a table without
// versions; gzip when asked; and a protobuf scrape still gets every series.
func TestMetricsHandlerMatchesGather(t *testing.T) {
	reg, m := metricsScenarioWith(t)
	h := m.Handler(reg, promhttp.HandlerOpts{})
	golden, err := os.ReadFile(filepath.Join("testdata", "metrics.golden"))
	if err != nil {
		t.Fatal(err)
	}
	_, body := scrape(t, h, nil)
	if diff := cmp.Diff(string(golden), string(body)); diff != "" {
		t.Errorf("text scrape differs from the golden exposition (-want +got):\n%s", diff)
	}

	v := int64(9)
	for _, name := range []string{`main.s."quoted"`, `main.s.back\slash`, "main.s.new\nline", "main.s.\xff"} {
		m.RecordTable(Table{Name: name, Type: "EXTER\"NAL", Mode: "warn", Status: "OutOfSync",
			Drift: []plan.DriftKind{plan.KindLocation, plan.KindComment, plan.KindSchema}, LogVersion: &v, OutOfSyncCycles: 2, LastSync: time.Unix(1e9, 5e8)})
	}
	want := encodeGather(t, reg)
	_, body = scrape(t, h, nil)
	if diff := cmp.Diff(want, string(body)); diff != "" {
		t.Errorf("text scrape differs from the gathered exposition (-want +got):\n%s", diff)
	}

	resp, zipped := scrape(t, h, map[string]string{"Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q with Accept-Encoding: gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if string(unzipped) != want {
		t.Errorf("gzipped text scrape differs from the gathered exposition")
	}

	if infos := protobufTableInfos(t, h); infos != 3+4 {
		t.Errorf("protobuf scrape: %d table_info series, want 7", infos)
	}
}

// TestTextScrapeHeapPerTable bounds what a text scrape allocates per
// table: its copy of the table's state, not a series object per series
// (a gather of the same registry: ~1.5 KiB per table, all live at once).
func TestTextScrapeHeapPerTable(t *testing.T) {
	const n = 2000
	reg, m := inSyncFleet(n)
	h := m.Handler(reg, promhttp.HandlerOpts{})
	_, body := scrape(t, h, nil) // warm
	if got := strings.Count(string(body), "\ndeltasync_table_"); got != 5*n {
		t.Fatalf("%d per-table samples in the scrape, want %d", got, 5*n)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h.ServeHTTP(discardWriter{header: http.Header{}}, req)
	runtime.ReadMemStats(&after)
	perTable := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("one text scrape: %.0f B allocated per table", perTable)
	if perTable > 512 {
		t.Errorf("a text scrape allocated %.0f B per table, want at most 512", perTable)
	}
}

// discardWriter is an http.ResponseWriter that keeps nothing.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// TestMetricsHandlerConcurrentScrapes: text scrapes running together with
// workers recording tables and a protobuf scrape all see every table: a
// text scrape's muting of the table collector never leaks into the
// protobuf one's gather. Run with -race.
func TestMetricsHandlerConcurrentScrapes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, "v", "go")
	const n = 200
	v := int64(1)
	for i := range n {
		m.RecordTable(Table{Name: fmt.Sprintf("c.s.t%03d", i), Type: "EXTERNAL", Mode: "sync", Status: "Synced", LogVersion: &v})
	}
	h := m.Handler(reg, promhttp.HandlerOpts{})
	var wg stdsync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20 {
				switch w {
				case 0: // a worker
					m.RecordTable(Table{Name: fmt.Sprintf("c.s.t%03d", i), Type: "EXTERNAL", Mode: "sync", Status: "Synced", LogVersion: &v})
				case 1: // a protobuf scraper
					infos := protobufTableInfos(t, h)
					if infos != n {
						t.Errorf("protobuf scrape %d: %d table_info series, want %d", i, infos, n)
					}
				default: // text scrapers
					_, body := scrape(t, h, nil)
					if got := strings.Count(string(body), "\ndeltasync_table_info{"); got != n {
						t.Errorf("text scrape %d: %d table_info series, want %d", i, got, n)
					}
				}
			}
		})
	}
	wg.Wait()
}
