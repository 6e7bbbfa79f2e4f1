package sync

import (
	"fmt"
	"github.com/deltasync/deltasync/sync/plan"
	"time"
)

// WatermarkUpdates says when an update that would only advance the
// catalog's version watermark (update-metadata-snapshot-version alone, for
// a data-only commit) is sent. A metadata change always carries the
// watermark with it.
//
// Every watermark-only write rolls the record's etag and updated_at: other
// writers holding the old etag get a 409, and tools that watch updated_at
// (Terraform) see a change. With data-only commits every minute, most
// catalog writes are such writes. Holding them back costs freshness: the
// record's last-commit-version (delta.lastUpdateVersion) and
// last-commit-timestamp lag the log until the next metadata change
// (WatermarkWithChanges) or by up to the interval (plus a cycle).
type WatermarkUpdates time.Duration

const (
	// WatermarkEveryCycle sends the watermark whenever the log moved: the
	// record names the log's latest version within a cycle (the default).
	WatermarkEveryCycle WatermarkUpdates = 0
	// WatermarkWithChanges sends it only together with a metadata change
	// (schema, partitioning, clustering, protocol, properties, comment),
	// as Delta Spark's catalog hook does.
	WatermarkWithChanges WatermarkUpdates = -1
)

// ParseWatermarkUpdates reads "every_cycle", "with_changes" or a positive
// duration ("15m": a watermark-only update is sent once the recorded
// version's commit is older than that).
func ParseWatermarkUpdates(s string) (WatermarkUpdates, error) {
	switch s {
	case "", "every_cycle":
		return WatermarkEveryCycle, nil
	case "with_changes":
		return WatermarkWithChanges, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want every_cycle, with_changes or a positive duration such as 15m", s)
	}
	return WatermarkUpdates(d), nil
}

func (w WatermarkUpdates) String() string {
	switch {
	case w == WatermarkEveryCycle:
		return "every_cycle"
	case w < 0:
		return "with_changes"
	}
	return time.Duration(w).String()
}

// holdWatermark reports whether a plan whose only difference is the
// watermark is left unsent under the policy. With an interval, the
// watermark is held while the recorded version's commit timestamp is
// younger than the interval: at most one watermark-only write per
// interval, and the record never names a version more than the interval
// (plus a cycle) behind the log's.
func (r *Reconciler) holdWatermark(rec *plan.Record, p *plan.Plan) bool {
	w := r.opts.WatermarkUpdates
	if w == WatermarkEveryCycle || p.Version == nil || p.MetadataDrift() {
		return false
	}
	// Only a watermark that lags is held: one ahead of the log (a
	// recreated table, whose new log the record must now name) is sent.
	if p.Version.Recreated != "" || p.Version.Catalog != nil && *p.Version.Catalog > p.Version.Log {
		return false
	}
	if w < 0 {
		return true
	}
	ts := rec.LastCommitTimestampMs
	if ts == nil || p.Version.Catalog == nil {
		return false
	}
	return r.opts.Now().Sub(time.UnixMilli(*ts)) < time.Duration(w)
}
