package uc

import (
	"slices"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// RefusedAction names the one update action of w a refusal rf is about,
// or "" when it cannot be told (see the package function RefusedAction).
func (k *Kind) RefusedAction(rf catalog.Refusal, w *catalog.Write) string {
	updates, err := WriteUpdates(w)
	if err != nil {
		return ""
	}
	return RefusedAction(rf, UpdateTableRequest{Updates: updates})
}

// Fallback is what still syncs after the catalog refused w with rf.
//
// When the refusal is about one action the client can name
// (RefusedAction) and other metadata actions remain, the update is resent
// without that action and without the watermark, so the rest still syncs:
// one Write (its Edit is w's: its Actions say what it carries); the
// table stays flagged refused for the kind left out.
//
// The watermark does not advance while a kind is left out: the record
// would claim a log version whose state (that kind) it does not hold, and
// a reader trusting the record's version, or deltasync's own check that
// it never pushes a snapshot older than the record's, would be misled.
// It advances with the first update the server takes whole.
//
// A refused set-columns that renames several columns of a column-mapped
// table is sent in rename steps instead (renameSteps): a set-columns per
// step, each renaming one more column, and last w's own request whole.
// Each step is its own guarded request: the first by read's etag, the
// next by the etag the previous one left (the caller sets it). The steps
// carry no Edit (nothing of the plan's changes but a column's name); the
// last is w's.
//
// nil when nothing can be sent: the refused action cannot be named, or
// nothing but it and the watermark is left.
func (k *Kind) Fallback(read *catalog.Read, _ catalog.LogState, edit *catalog.Edit, w *catalog.Write, rf catalog.Refusal) []*catalog.Write {
	updates, err := WriteUpdates(w)
	if err != nil || read == nil {
		return nil
	}
	action := RefusedAction(rf, UpdateTableRequest{Updates: updates})
	if action == "" {
		return nil
	}
	if action == catalog.ActionSetColumns {
		if steps := k.renameInSteps(read, edit, w, updates); steps != nil {
			return steps
		}
	}
	rest := slices.DeleteFunc(slices.Clone(updates), func(u Update) bool {
		return u.Action() == action || u.Action() == catalog.ActionUpdateSnapshotVersion
	})
	if len(rest) == 0 {
		return nil
	}
	req, err := requestOf(rest)
	if err != nil {
		return nil
	}
	split := *w
	split.TableID, split.Etag = read.ID, read.Etag
	split.Actions, split.Request = ActionNames(rest), req
	return []*catalog.Write{&split}
}

// Servers with the set-columns guards of Unity Catalog PRs #1907/#1909
// (open as of 0.6.0) take at most one top-level column rename per request.
// A log that renamed several columns since the record was written is then
// synced in steps: each step renames one more column of the record's own
// columns (nothing else changes, so the record never holds a schema that is
// neither the old one nor the log's but for names), and the last step is
// the planned update, which then holds the one remaining rename. Each step
// is its own guarded request (uuid and the etag the previous step left).

// renameInSteps is the rename steps for a set-columns the server refused,
// then w whole; nil when there are none (see renameSteps).
func (k *Kind) renameInSteps(read *catalog.Read, edit *catalog.Edit, w *catalog.Write, updates []Update) []*catalog.Write {
	if edit == nil || !setsColumns(updates) {
		return nil
	}
	steps := renameSteps(read.Columns, edit.Renames, read.Properties["delta.columnMapping.mode"])
	if steps == nil {
		return nil
	}
	out := make([]*catalog.Write, 0, len(steps)+1)
	for _, cols := range steps {
		req, err := requestOf([]Update{SetColumns{Columns: cols}})
		if err != nil {
			return nil
		}
		out = append(out, &catalog.Write{Kind: KindName, Table: w.Table, TableID: read.ID, Etag: read.Etag,
			Actions: []string{catalog.ActionSetColumns}, LogVersion: w.LogVersion, Request: req})
	}
	last := *w
	last.TableID, last.Etag = read.ID, read.Etag
	return append(out, &last)
}

// renameSteps returns the intermediate column lists that take from
// through renames (catalog.Edit.Renames: the record's name → the log's,
// the columns the plan classified as renamed, matched by their
// column-mapping identity there and nowhere else) one top-level rename at
// a time, before the final update that sends the log's columns: for n
// renames, n-1 lists. It returns nil when fewer than two columns are
// renamed, when the table uses no column mapping (mode is neither "id" nor
// "name": the server refuses any rename there, one at a time or not), or
// when an intermediate list would hold two columns equal ignoring case (a
// swap: a→b, b→a), which no order of single renames can avoid.
func renameSteps(from catalog.StructType, renames map[string]string, mode string) []catalog.StructType {
	if mode != "id" && mode != "name" {
		return nil
	}
	var renamed []int // indexes into from.Fields, in column order
	for i, f := range from.Fields {
		if _, ok := renames[f.Name]; ok {
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
		cur[i].Name = renames[cur[i].Name]
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
func setsColumns(updates []Update) bool {
	return slices.ContainsFunc(updates, func(u Update) bool { return u.Action() == catalog.ActionSetColumns })
}
