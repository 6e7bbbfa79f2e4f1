// Package events is a source of work for the reconciler, as
// controller-runtime's pkg/source is: it subscribes to storage
// notifications (any gocloud.dev/pubsub subscription), parses them
// (parse.go: S3, SNS, EventBridge, MinIO, GCS, Event Grid, CloudEvents),
// matches each new _delta_log file to the tables whose log lives there
// (match.go), debounces a burst of commits into one reconcile, and
// acknowledges a message only once a reconcile has seen the commit it
// announced.
//
// It reaches the reconciler only through what sync exports: the
// Reconciler interface (Reconcile, Tracked) and a *sync.Dirty it marks,
// which the reconciler consults to skip the storage LIST of a table no
// notification named since its last full read. Package sync imports
// nothing of this package; the reconcile path never calls it
// (cmd/deltasync/layout_test.go holds it so).
//
// Invariants: a message is acknowledged only after every table it named was
// reconciled at the announced version or later, or returned to the broker
// (or left to the cron cycle) after MaxWait; a poison message is
// acknowledged and counted, never retried; while any subscription is down,
// or was down since a table's last full read, no read of that table is
// skipped.
package events
