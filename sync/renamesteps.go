package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// Servers with the set-columns guards of Unity Catalog PRs #1907/#1909
// (open as of 0.6.0) take at most one top-level column rename per request.
// A log that renamed several columns since the record was written is then
// synced in steps: each step renames one more column of the record's own
// columns (nothing else changes, so the record never holds a schema that is
// neither the old one nor the log's but for names), and the last step is
// the planned update, which then holds the one remaining rename. Each step
// is its own guarded request (uuid and the etag the previous step left).

// renameSteps returns the intermediate column lists that take from
// through the renames of a plan's changes (plan.Change.Rename: the
// columns the plan classified as renamed, matched by their column-mapping
// identity there and nowhere else) one top-level rename at a time, before
// the final update that sends the log's columns: for n renames, n-1
// lists. It returns nil when fewer than two columns are renamed, when the
// table uses no column mapping (mode is neither "id" nor "name": the
// server refuses any rename there, one at a time or not), or when an
// intermediate list would hold two columns equal ignoring case (a swap:
// a→b, b→a), which no order of single renames can avoid.
func renameSteps(from catalog.StructType, changes []plan.Change, mode string) []catalog.StructType {
	if mode != "id" && mode != "name" {
		return nil
	}
	newName := map[string]string{} // the catalog's name -> the log's
	for _, c := range changes {
		if old, to, ok := c.Rename(); ok {
			newName[old] = to
		}
	}
	var renamed []int // indexes into from.Fields, in column order
	for i, f := range from.Fields {
		if _, ok := newName[f.Name]; ok {
			renamed = append(renamed, i)
		}
	}
	if len(renamed) < 2 {
		return nil
	}
	cur := append([]catalog.StructField(nil), from.Fields...)
	steps := make([]catalog.StructType, 0, len(renamed)-1)
	for _, i := range renamed[:len(renamed)-1] {
		cur = append([]catalog.StructField(nil), cur...)
		cur[i].Name = newName[cur[i].Name]
		if duplicateNames(cur) {
			return nil
		}
		steps = append(steps, catalog.StructType{Fields: cur})
	}
	return steps
}

func duplicateNames(fields []catalog.StructField) bool {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		k := strings.ToLower(f.Name)
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// setsColumns reports whether a planned update sets the columns.
func setsColumns(updates []uc.Update) bool {
	return slices.ContainsFunc(updates, func(u uc.Update) bool { return u.Action() == "set-columns" })
}

// renameInSteps sends the rename steps for a set-columns the server
// refused, then the planned update whole. It reports whether it tried
// (steps exist) and, if so, the etag the planned update is to be guarded
// by, or the error that stopped it; a step the server refuses too leaves
// the table flagged with that answer.
func (r *Reconciler) renameInSteps(ctx context.Context, t Target, rec *plan.Record, updates []uc.Update, changes []plan.Change) (bool, error) {
	if !setsColumns(updates) {
		return false, nil
	}
	steps := renameSteps(rec.Columns, changes, rec.Properties["delta.columnMapping.mode"])
	if steps == nil {
		return false, nil
	}
	etag := rec.Etag
	for i, cols := range steps {
		req := uc.UpdateTableRequest{
			Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: rec.ID}, uc.AssertEtag{Etag: etag}},
			Updates:      []uc.Update{uc.SetColumns{Columns: cols}},
		}
		r.logger(ctx).Info("set-columns refused for several renames; renaming one column per request",
			zap.String("table", t.Name.String()), zap.Int("step", i+1), zap.Int("steps", len(steps)+1))
		lt, err := r.updateTable(ctx, t.Name, req, nil, nil) // a step: one column renamed, the plan's changes come with the last
		if err != nil {
			return true, fmt.Errorf("rename step %d of %d: %w", i+1, len(steps)+1, err)
		}
		etag = lt.Metadata.Etag
	}
	req := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: rec.ID}, uc.AssertEtag{Etag: etag}},
		Updates:      updates,
	}
	if _, err := r.updateTable(ctx, t.Name, req, changes, nil); err != nil {
		return true, fmt.Errorf("rename step %d of %d (the planned update): %w", len(steps)+1, len(steps)+1, err)
	}
	return true, nil
}
