package sync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
)

// TestHMSColumnsRealRefused: with columns: real, a table Spark
// registered (the placeholder column `col array<string>`) cannot take the
// log's columns — HMS refuses the incompatible column change by default.
// The table is flagged with HMS's own reason, nothing else of the record
// is written (no partial write, no drop and recreate), and the next cycle
// does not send the same refused write again (refusal backoff).
func TestHMSColumnsRealRefused(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		_, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
		e.sparkRegister("ev", loc)
		before := e.stored("ev")
		r := e.reconciler(func(o *sync.Options) {
			o.Catalog = hms.NewKind(e.client, hms.KindOptions{LockWait: 2 * time.Second, Columns: hms.ColumnsReal})
		})
		ctx := context.Background()
		name := "hive." + e.db + ".ev"
		e.takeCalls()
		res := resultOf(t, r.Sync(ctx), name)
		if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonRefused {
			t.Fatalf("got %s/%s (%s), want flagged refused", res.Outcome, res.ErrorReason, res.Reason)
		}
		if !strings.Contains(strings.ToLower(res.Reason), "incompatible") {
			t.Errorf("reason %q does not carry HMS's reason (incompatible column types)", res.Reason)
		}
		after := e.stored("ev")
		if after.Parameters[hms.KeyDDLTime] != before.Parameters[hms.KeyDDLTime] || len(after.Parameters) != len(before.Parameters) ||
			!hms.IsPlaceholder(after.Sd.Cols) {
			t.Errorf("the refused write changed the record: parameters %v -> %v, cols %v", before.Parameters, after.Parameters, after.Sd.Cols)
		}
		if c := e.takeCalls(); c["alter_table_with_environment_context"] != 1 {
			t.Errorf("first cycle calls %v, want the one refused alter", c)
		}
		rep := r.Sync(ctx)
		if c := e.takeCalls(); c["alter_table_with_environment_context"] != 0 {
			t.Errorf("second cycle sent the refused write again: calls %v, %s", c, rep.Summary())
		}
	})
}
