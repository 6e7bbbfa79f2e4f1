package hms

import (
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// TestImportBoundary keeps catalog/hms independent of deltalog and sync: imports
// flow cmd → sync → {deltalog, catalog} only. internal/ packages hold facts
// shared with deltalog and import no deltasync package themselves (their
// tests check).
func TestImportBoundary(t *testing.T) {
	importcheck.Boundary(t, "catalog/hms", importcheck.Module+"internal/")
}
