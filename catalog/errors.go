package catalog

import "errors"

// The error classes below (with ErrRefused) are what the reconcile
// branches on whatever the kind: a kind's errors answer errors.Is for the
// class they belong to.

// ErrConflict means the record moved since it was read: the guard of a
// write failed (for Unity Catalog, a 409 UpdateRequirementConflict from
// assert-table-uuid or assert-etag). Read the record again and re-plan.
var ErrConflict = errors.New("catalog: the record changed since it was read")

// ErrNotFound means the table, its schema or its catalog is not in the
// catalog.
var ErrNotFound = errors.New("catalog: not found")

// ErrNotDelta means the record is not a Delta table's (a listed Parquet,
// Iceberg or view record, or a table type the kind cannot read as Delta):
// it is reported as skipped or flagged, never written.
var ErrNotDelta = errors.New("catalog: not a Delta table")

// ErrUnsupported means the kind cannot hold the log's state in the record
// as it is (a record shape it cannot edit, a field it cannot store): the
// table is flagged, and nothing is sent.
var ErrUnsupported = errors.New("catalog: the record cannot hold the log's state")

// ErrOutcomeUnknown means a write was sent and its answer lost (a resend's
// conflict, a cut connection, a timeout): whether it was applied is known
// only by reading the record again.
var ErrOutcomeUnknown = errors.New("catalog: the write's outcome is unknown")

// ErrAlreadyExists means a create found the name taken.
var ErrAlreadyExists = errors.New("catalog: already exists")

// ClassError is an error of one of this package's classes (Class) whose
// message is its own: Msg, else Err's. errors.Is finds the class and Err.
// A kind returns it where its client's error does not answer the class
// itself.
type ClassError struct {
	Class error
	Msg   string
	Err   error
}

func (e *ClassError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Err.Error()
}

// Unwrap is the class, and Err when there is one.
func (e *ClassError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Class}
	}
	return []error{e.Class, e.Err}
}
