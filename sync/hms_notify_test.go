package sync_test

import (
	"context"
	"github.com/deltasync/deltasync/catalog/hms"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/notify"
)

// TestHMSNotifies: on a Hive Metastore (the fakes, and the real HMS 4.0.1
// and 3.1.3 when set), a sync is told to the Notifier as such, with the
// catalog kind hive-metastore, the table's location and the log's schema:
// events are the same whatever the catalog kind. The next cycle, in sync,
// is no event.
func TestHMSNotifies(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		_, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
		e.sparkRegister("ev", loc)
		var got notices
		r := e.reconciler(func(o *sync.Options) { o.Notifier = &got })
		ctx := context.Background()
		r.Sync(ctx)
		r.Sync(ctx)
		told := got.of("hive." + e.db + ".ev")
		if len(told) != 2 {
			t.Fatalf("told %d outcomes, want 2 (one a cycle)", len(told))
		}
		n := told[0]
		if n.Result.Outcome != sync.OutcomeSynced || n.CatalogKind != hms.KindName ||
			!strings.HasSuffix(strings.TrimSuffix(n.Location, "/"), "/ev") || n.SchemaString == "" {
			t.Fatalf("first cycle told %+v", n)
		}
		ev, ok := notify.FromNotice(n, "x", time.Now())
		if !ok || ev.Kind != notify.KindSynced || ev.CatalogKind != "hive-metastore" || len(ev.Changes) == 0 {
			t.Fatalf("event %+v, %v", ev, ok)
		}
		if _, ok := notify.FromNotice(told[1], "x", time.Now()); ok {
			t.Errorf("second cycle (%s) became an event", told[1].Result.Outcome)
		}
	})
}
