package sync_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
)

// TestShutdownBoundsTableInFlight: once the cycle's context is cancelled
// (SIGTERM), a table in flight against a catalog that stopped answering is
// given up after Options.ShutdownDrain, not after every retry of every
// request (4 attempts × a 30 s per-attempt timeout here, minutes in
// production), which would outlast any grace period.
func TestShutdownBoundsTableInFlight(t *testing.T) {
	e := uctestEnv(t)
	e.register("basic_partitioned", "hangs", -1)
	fp := newFaultProxy(t, e.client.BaseURL())
	hung := make(chan struct{}, 16)
	released := make(chan struct{}, 16)
	fp.set(func() {
		fp.before = func(r *http.Request, _ []byte) {
			hung <- struct{}{}
			<-r.Context().Done() // never answers; returns when the client gives up
			released <- struct{}{}
		}
	})
	u, _ := url.Parse(e.client.BaseURL())
	u.Host = hostOf(t, fp.srv.URL)
	c, err := uc.New(u.String(), uc.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{e.catalog + ".s.*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sync.New(sync.Options{Catalog: kindOf(c), Selector: sel, ShutdownDrain: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan sync.Result, 1)
	go func() { done <- rec.Reconcile(ctx, sync.Target{Name: e.name("hangs"), Mode: sync.ModeSync}) }()
	<-hung // the table is in flight, its loadTable hanging
	cancel()
	select {
	case res := <-done:
		if res.Outcome != sync.OutcomeFailed || !strings.Contains(res.Reason, "context canceled") {
			t.Errorf("after shutdown: %s %s, want failed with the cancellation: %s", res.Outcome, res.Status, res.Reason)
		}
		<-released
	case <-time.After(25 * time.Second):
		// Guard only: without the drain bound this waits for the 30 s
		// per-attempt timeout (and three more attempts).
		t.Fatal("the table in flight was not given up after the shutdown drain")
	}
}
