package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
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

// renameSteps returns the intermediate column lists that take from to
// to one top-level rename at a time, before the final update that sends
// to itself: for n renames, n-1 lists. It returns nil when fewer than two
// columns are renamed, when columns are matched by no column-mapping
// identity (mode is neither "id" nor "name"), or when an intermediate
// list would hold two columns equal ignoring case (a swap: a→b, b→a),
// which no order of single renames can avoid.
func renameSteps(from, to catalog.StructType, mode string) []catalog.StructType {
	if mode != "id" && mode != "name" {
		return nil
	}
	newName := map[string]string{}
	for _, f := range to.Fields {
		if id := fieldIdentity(f, mode); id != "" {
			newName[id] = f.Name
		}
	}
	var renamed []int // indexes into from.Fields, in column order
	for i, f := range from.Fields {
		id := fieldIdentity(f, mode)
		if n, ok := newName[id]; ok && id != "" && n != f.Name {
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
		cur[i].Name = newName[fieldIdentity(cur[i], mode)]
		if duplicateNames(cur) {
			return nil
		}
		steps = append(steps, catalog.StructType{Fields: cur})
	}
	return steps
}

// fieldIdentity is the key a column keeps across renames under the
// column-mapping mode ("" when the field has none).
func fieldIdentity(f catalog.StructField, mode string) string {
	key := "delta.columnMapping.physicalName"
	if mode == "id" {
		key = "delta.columnMapping.id"
	}
	switch v := f.Metadata[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	}
	return ""
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

// setColumnsOf returns the columns a planned update sets, if it does.
func setColumnsOf(updates []catalog.Update) (catalog.StructType, bool) {
	for _, u := range updates {
		if sc, ok := u.(catalog.SetColumns); ok {
			return sc.Columns, true
		}
		if sc, ok := u.(*catalog.SetColumns); ok && sc != nil {
			return sc.Columns, true
		}
	}
	return catalog.StructType{}, false
}

// renameInSteps sends the rename steps for a set-columns the server
// refused, then the planned update whole. It reports whether it tried
// (steps exist) and, if so, the etag the planned update is to be guarded
// by, or the error that stopped it; a step the server refuses too leaves
// the table flagged with that answer.
func (r *Reconciler) renameInSteps(ctx context.Context, t Target, rec *plan.Record, updates []catalog.Update, changes []plan.Change) (bool, error) {
	to, ok := setColumnsOf(updates)
	if !ok {
		return false, nil
	}
	steps := renameSteps(rec.Columns, to, rec.Properties["delta.columnMapping.mode"])
	if steps == nil {
		return false, nil
	}
	etag := rec.Etag
	for i, cols := range steps {
		req := catalog.UpdateTableRequest{
			Requirements: []catalog.Requirement{catalog.AssertTableUUID{UUID: rec.ID}, catalog.AssertEtag{Etag: etag}},
			Updates:      []catalog.Update{catalog.SetColumns{Columns: cols}},
		}
		r.logger(ctx).Info("set-columns refused for several renames; renaming one column per request",
			zap.String("table", t.Name.String()), zap.Int("step", i+1), zap.Int("steps", len(steps)+1))
		lt, err := r.updateTable(ctx, t.Name, req, nil, nil) // a step: one column renamed, the plan's changes come with the last
		if err != nil {
			return true, fmt.Errorf("rename step %d of %d: %w", i+1, len(steps)+1, err)
		}
		etag = lt.Metadata.Etag
	}
	req := catalog.UpdateTableRequest{
		Requirements: []catalog.Requirement{catalog.AssertTableUUID{UUID: rec.ID}, catalog.AssertEtag{Etag: etag}},
		Updates:      updates,
	}
	if _, err := r.updateTable(ctx, t.Name, req, changes, nil); err != nil {
		return true, fmt.Errorf("rename step %d of %d (the planned update): %w", len(steps)+1, len(steps)+1, err)
	}
	return true, nil
}
