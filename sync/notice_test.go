package sync_test

import (
	"context"
	"github.com/deltasync/deltasync/catalog/uc"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/deltasync/deltasync/sync"
)

// notices is a Notifier that keeps what it is told.
type notices struct {
	mu  stdsync.Mutex
	got []sync.Notice
}

func (n *notices) Notify(no sync.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, no)
}

func (n *notices) of(table string) []sync.Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []sync.Notice
	for _, no := range n.got {
		if no.Result.Table == table {
			out = append(out, no)
		}
	}
	return out
}

// TestNotifierTold: the Notifier is told each table's outcome once per
// reconcile, with what the events need beyond the Result — the catalog
// kind, the location, the log's schema and the plan's change rows — for a
// held destructive change and for a sync alike.
func TestNotifierTold(t *testing.T) {
	e := newEnv(t)
	const src = "log-replay-latest-metadata-protocol"
	e.register(src, "d", -1)
	e.divergeCatalog("d", map[string]string{"stray": "x"}) // destructive: held
	dir := e.register(src, "n", 1)
	copyLog(t, src, dir, -1) // the log moved on: synced
	hold := []sync.Rule{{Include: []string{e.catalog + ".s.*"}, OnDestructive: sync.OnDestructiveHold}}
	var got notices
	rep := e.reconciler(hold, func(o *sync.Options) { o.Notifier = &got }).Sync(context.Background())
	d := got.of(e.name("d").String())
	if len(d) != 1 || d[0].Result.Held != sync.HeldDestructive || d[0].CatalogKind != uc.KindName ||
		d[0].Location == "" || d[0].SchemaString == "" || len(d[0].Changes) == 0 {
		t.Fatalf("held table told %+v\n%s", d, reportText(rep))
	}
	n := got.of(e.name("n").String())
	if len(n) != 1 || n[0].Result.Outcome != sync.OutcomeSynced || !strings.HasSuffix(n[0].Location, "/n") || len(n[0].Changes) == 0 {
		t.Fatalf("synced table told %+v\n%s", n, reportText(rep))
	}
}
