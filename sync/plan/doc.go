// Package plan is what a reconcile decides from, and nothing else: the
// log's state (LogState), the catalog's record of the table (Record), and
// the pure, deterministic comparison between them (Diff) that yields a
// typed Plan of field-by-field changes, the kinds of drift it reports
// (DriftKind), and the updateTable actions that fix it (Plan.Updates).
//
// It does no I/O and imports neither sync nor deltalog: sync reads both
// sides, builds the values here, and acts on the Plan. That keeps the
// comparison testable alone (go test ./sync/plan/ runs in well under a
// second) and lets change control, registration and reports enumerate a plan's
// changes without a reconciler.
package plan
