package sync_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// gauges reads every unlabelled gauge of reg by name.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if ms := mf.GetMetric(); len(ms) == 1 && ms[0].GetGauge() != nil {
			out[mf.GetName()] = ms[0].GetGauge().GetValue()
		}
	}
	return out
}

// TestProgressWhileCycleRuns: while a cycle is held up on its first table's
// catalog read, Progress and the deltasync_cycle_* gauges show it running, how
// many tables it has queued and that none is done yet; when it ends they
// show it finished with every table done.
func TestProgressWhileCycleRuns(t *testing.T) {
	e := uctestEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		e.register("basic_partitioned", n, -1)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	// The first per-table catalog request (after the listing) is held.
	entered, release := make(chan struct{}), make(chan struct{})
	var once stdsync.Once
	fp := newFaultProxy(t, e.client.BaseURL())
	fp.set(func() {
		fp.before = func(r *http.Request, _ []byte) {
			if strings.Contains(r.URL.Path, "/tables/") {
				once.Do(func() { close(entered); <-release })
			}
		}
	})
	u, _ := url.Parse(e.client.BaseURL())
	u.Host = hostOf(t, fp.srv.URL)
	c, err := uc.New(u.String(), uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}, Mode: sync.ModeSync}}, func(o *sync.Options) {
		o.Catalog, o.Concurrency, o.Metrics = kindOf(c), 1, m
	})
	if p := r.Progress(); p.Cycle != 0 || p.Running || p.String() != "no cycle started yet" {
		t.Errorf("before any cycle: %+v (%s)", p, p)
	}
	if g := gauges(t, reg); g["deltasync_cycle_in_progress"] != 0 || g["deltasync_cycle_started_timestamp_seconds"] != 0 {
		t.Errorf("before any cycle: gauges %v", g)
	}
	before := time.Now()
	done := make(chan *sync.Report, 1)
	go func() { done <- r.Sync(context.Background()) }()
	<-entered
	// The listing finishes on its own (the jobs queue holds all three).
	deadline := time.Now().Add(10 * time.Second)
	for !r.Progress().ListingDone && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p := r.Progress()
	if !p.Running || p.Cycle != 1 || p.Started.Before(before.Add(-time.Second)) || p.Listed != 3 || !p.ListingDone || p.Done != 0 {
		t.Errorf("mid-cycle progress %+v; want running cycle 1, 3 listed, listing done, 0 done", p)
	}
	if s := p.String(); !strings.HasPrefix(s, "cycle 1 running for ") || !strings.HasSuffix(s, ": 0 of 3 tables reconciled") {
		t.Errorf("mid-cycle description %q", s)
	}
	g := gauges(t, reg)
	if g["deltasync_cycle_in_progress"] != 1 || g["deltasync_cycle_tables_listed"] != 3 || g["deltasync_cycle_tables_done"] != 0 ||
		g["deltasync_cycle_started_timestamp_seconds"] != float64(p.Started.UnixNano())/1e9 {
		t.Errorf("mid-cycle gauges %v; want in progress, 3 listed, 0 done, started %v", g, p.Started)
	}
	close(release)
	rep := <-done
	if rep.Count(sync.OutcomeFailed) != 0 || len(rep.Results) != 3 {
		t.Fatalf("cycle: %s", rep.Summary())
	}
	p = r.Progress()
	if p.Running || p.Cycle != 1 || p.Done != 3 || p.Listed != 3 || p.Finished.Before(p.Started) {
		t.Errorf("after the cycle: %+v", p)
	}
	if s := p.String(); !strings.HasPrefix(s, "cycle 1 finished ") || !strings.HasSuffix(s, ": 3 of 3 tables reconciled") {
		t.Errorf("after the cycle: description %q", s)
	}
	g = gauges(t, reg)
	if g["deltasync_cycle_in_progress"] != 0 || g["deltasync_cycle_tables_listed"] != 3 || g["deltasync_cycle_tables_done"] != 3 {
		t.Errorf("after the cycle: gauges %v", g)
	}
}

// TestCatalogRetrySleepCounts: a request waiting in the retry policy's
// Sleep is counted in deltasync_catalog_requests_waiting until the wait
// ends (here: its context is cancelled).
func TestCatalogRetrySleepCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 2)
	for range 2 {
		go func() { errc <- m.CatalogRetrySleep(ctx, time.Hour) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for gauges(t, reg)["deltasync_catalog_requests_waiting"] != 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := gauges(t, reg)["deltasync_catalog_requests_waiting"]; n != 2 {
		t.Fatalf("waiting requests %v, want 2", n)
	}
	cancel()
	for range 2 {
		if err := <-errc; err != context.Canceled {
			t.Errorf("Sleep after cancel: %v, want context.Canceled", err)
		}
	}
	if n := gauges(t, reg)["deltasync_catalog_requests_waiting"]; n != 0 {
		t.Errorf("waiting requests after the waits ended: %v, want 0", n)
	}
	if err := m.CatalogRetrySleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a 1ms wait: %v", err)
	}
}
