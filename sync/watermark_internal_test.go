package sync

import (
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync/plan"
)

// TestHoldWatermarkHoldsOnlyALag: with_changes (or an interval) holds a
// watermark that lags the log, never one ahead of it: a recreated table's
// record must come to name its new, shorter log.
func TestHoldWatermarkHoldsOnlyALag(t *testing.T) {
	now := time.UnixMilli(1_700_000_100_000)
	ts := int64(1_700_000_000_000)
	rec := &plan.Record{LastCommitTimestampMs: &ts}
	v := func(i int64) *int64 { return &i }
	for _, w := range []WatermarkUpdates{WatermarkWithChanges, WatermarkUpdates(time.Hour)} {
		r := &Reconciler{opts: Options{WatermarkUpdates: w, Now: func() time.Time { return now }}}
		for _, tc := range []struct {
			name string
			ver  plan.VersionChange
			hold bool
		}{
			{"lagging", plan.VersionChange{Log: 5, Catalog: v(3)}, true},
			{"recreated shorter", plan.VersionChange{Log: 0, Catalog: v(3), Recreated: "log was recreated: metaData.id new"}, false},
			{"ahead without evidence", plan.VersionChange{Log: 0, Catalog: v(3)}, false},
		} {
			if got := r.holdWatermark(rec, &plan.Plan{Version: &tc.ver}); got != tc.hold {
				t.Errorf("%s, %s: held %t, want %t", w, tc.name, got, tc.hold)
			}
		}
	}
}
