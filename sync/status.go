package sync

import "time"

// Kind is one kind of difference between the log and the catalog.
type Kind string

// The kinds of drift. The first seven are the label values of
// deltasync_table_drift; KindVersion (the catalog's watermark lags the log)
// is not drift in metadata and is only reported in plans.
const (
	KindSchema       Kind = "schema"
	KindPartitioning Kind = "partitioning"
	KindClustering   Kind = "clustering"
	KindProtocol     Kind = "protocol"
	KindProperties   Kind = "properties"
	KindComment      Kind = "comment"
	KindLocation     Kind = "location"
	KindVersion      Kind = "version"
)

// TableStatus is the latest known state of one table, as shown on the status
// page and in metrics. It is a value: Reconciler.Status returns copies.
type TableStatus struct {
	Table           string    `json:"table"`
	Type            string    `json:"table_type"` // MANAGED | EXTERNAL | "" when unknown
	Mode            Mode      `json:"mode"`
	Status          Status    `json:"sync_status"`
	Outcome         Outcome   `json:"outcome"`
	Drift           []Kind    `json:"drift,omitempty"`
	Reason          string    `json:"reason,omitempty"`
	LogVersion      *int64    `json:"log_version,omitempty"`
	CatalogVersion  *int64    `json:"catalog_version,omitempty"`
	LastSync        time.Time `json:"last_sync,omitzero"`  // last time seen in sync (unchanged or synced)
	LastCycle       time.Time `json:"last_cycle,omitzero"` // last time reconciled
	LastError       string    `json:"last_error,omitempty"`
	OutOfSyncCycles int       `json:"out_of_sync_cycles"`
	// Failures counts consecutive failed reconciles (drives backoff).
	Failures int `json:"failures,omitempty"`
	// NextAttempt is when a failing table is tried again (zero: next cycle).
	NextAttempt time.Time `json:"next_attempt,omitzero"`
}
