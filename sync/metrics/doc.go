// Package metrics is deltasync's Prometheus metrics: the collectors of a
// cycle, of catalog and storage requests, of the read pool and the storage
// gates, the per-table series (deltasync_table_*, written without the
// client library's per-scrape copies) and the /metrics handler that serves
// them. The names are a published contract (alert rules and dashboards
// depend on them): they are only ever added to. It knows nothing of sync:
// the reconcile hands it a Table and strings (sync.Outcome, ErrorReason).
package metrics
