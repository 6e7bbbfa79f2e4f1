package sync

import (
	"time"

	"github.com/deltasync/deltasync/sync/metrics"
	"github.com/deltasync/deltasync/sync/plan"
)

// TableStatus is the latest known state of one table, as shown on the status
// page and in metrics. It is a value: Reconciler.Status returns copies.
type TableStatus struct {
	Table   string           `json:"table"`
	Type    string           `json:"table_type"` // MANAGED | EXTERNAL | "" when unknown
	Mode    Mode             `json:"mode"`
	Status  Status           `json:"sync_status"`
	Outcome Outcome          `json:"outcome"`
	Drift   []plan.DriftKind `json:"drift,omitempty"`
	Reason  string           `json:"reason,omitempty"`
	// Held is HeldDestructive while the last reconcile held the table's
	// update for its destructive changes (on_destructive: hold); "" when
	// not held. A reconcile that failed before deciding keeps it.
	Held string `json:"held,omitempty"`
	// ErrorReason is the last reconcile's (e.g. "refused": the catalog
	// refused the update, and Failures counts the refusals in a row).
	ErrorReason     ErrorReason `json:"error_reason,omitempty"`
	LogVersion      *int64      `json:"log_version,omitempty"`
	CatalogVersion  *int64      `json:"catalog_version,omitempty"`
	LastSync        time.Time   `json:"last_sync,omitzero"`  // last time seen in sync (unchanged or synced)
	LastCycle       time.Time   `json:"last_cycle,omitzero"` // last time reconciled
	LastError       string      `json:"last_error,omitempty"`
	OutOfSyncCycles int         `json:"out_of_sync_cycles"`
	// Failures counts consecutive failed reconciles (drives backoff).
	Failures int `json:"failures,omitempty"`
	// NextAttempt is when a failing table is tried again (zero: next cycle).
	NextAttempt time.Time `json:"next_attempt,omitzero"`
}

// metricsTable is a table's status as the per-table series publish it.
func metricsTable(st TableStatus) metrics.Table {
	return metrics.Table{Name: st.Table, Type: st.Type, Mode: string(st.Mode), Status: string(st.Status),
		Outcome: string(st.Outcome), Drift: st.Drift, Held: st.Held != "", LogVersion: st.LogVersion,
		CatalogVersion: st.CatalogVersion, LastSync: st.LastSync, OutOfSyncCycles: st.OutOfSyncCycles}
}
