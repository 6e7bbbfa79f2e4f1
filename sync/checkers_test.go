package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
)

// A cycle's unchanged tables are confirmed by their own checkers, not
// behind full reconciles: with Concurrency 1 and the first listed table's
// catalog read held, the 12 other
// (verified, unchanged) tables still finish while it is held. Before, the one worker held the held
// table and every check waited behind it.
func TestUnchangedChecksDoNotWaitBehindReconciles(t *testing.T) {
	e := uctestEnv(t)
	slow := e.register("delta-0.8.0", "a_slow", -1)
	const others = 12
	for i := range others {
		e.register("delta-0.8.0", fmt.Sprintf("t%02d", i), -1)
	}
	// a_slow's full reconcile is held at its loadTable, once armed, until
	// the other tables are done (or 20 s passed).
	var armed atomic.Bool
	doneWhileHeld := make(chan int, 1)
	var r *sync.Reconciler
	hold := func() {
		deadline := time.Now().Add(20 * time.Second)
		for r.Progress().Done < others && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		doneWhileHeld <- r.Progress().Done
	}
	c, err := uc.New(e.srv.URL(), uc.Options{HTTPClient: &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/tables/a_slow") && armed.CompareAndSwap(true, false) {
			hold()
		}
		return http.DefaultTransport.RoundTrip(req)
	})}})
	if err != nil {
		t.Fatal(err)
	}
	r = e.reconciler([]sync.Rule{{Include: []string{e.catalog + "." + e.schema + ".*"}}},
		func(o *sync.Options) { o.Concurrency, o.Catalog, o.ResyncInterval = 1, kindOf(c), 100*time.Hour })
	if rep := r.Sync(context.Background()); rep.Count(sync.OutcomeFailed) > 0 {
		t.Fatalf("first cycle:\n%s", reportText(rep))
	}
	writeCommit(t, slow, 2, metaData(`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`,
		"", map[string]string{"owner.team": "data"}))
	armed.Store(true)
	rep := r.Sync(context.Background())
	if got := <-doneWhileHeld; got < others {
		t.Errorf("%d of %d unchanged tables done while a_slow's catalog read was held, want all", got, others)
	}
	if got := rep.Count(sync.OutcomeUnchanged); got != others {
		t.Errorf("%d unchanged, want %d\n%s", got, others, reportText(rep))
	}
	if got := rep.Count(sync.OutcomeSynced); got != 1 {
		t.Errorf("%d synced, want 1 (a_slow)\n%s", got, reportText(rep))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
