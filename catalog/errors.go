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
