package plan

import "github.com/deltasync/deltasync/catalog"

// The two sides of a Diff are the neutral model's: what a catalog kind
// read (Record) and what the log says (LogState).
type (
	// Record is catalog.Record.
	Record = catalog.Record
	// Commit is catalog.Commit.
	Commit = catalog.Commit
	// IcebergPointer is catalog.IcebergPointer.
	IcebergPointer = catalog.IcebergPointer
	// LogState is catalog.LogState.
	LogState = catalog.LogState
)
