package hms

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"
)

// Edit is one table's write as a saved plan keeps it (deltasync plan
// --out, then apply): the parameters set and removed, and with columns:
// real the HMS columns, when the write changes them. Applied to the
// record it was computed from (EditOf), it gives exactly the record the
// sync would have written; applied to the same record read again later
// (Apply checks it is the same), the same one. Every other field of the
// stored table (owner, serde, storage fields, partition keys, parameters
// not named here) is left as stored.
type Edit struct {
	Set    map[string]string `json:"set,omitempty"`
	Remove []string          `json:"remove,omitempty"`
	// Columns replace the HMS columns when set (nil: unchanged).
	Columns []Column `json:"columns,omitempty"`
}

// Column is one HMS column of an Edit.
type Column struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Comment string `json:"comment,omitempty"`
}

// EditOf is the edit that turns stored into next (both the same table;
// next as Apply made it from stored). transient_lastDdlTime is not part
// of it: the guarded write sets it.
func EditOf(stored, next *hm.Table) Edit {
	var e Edit
	for k, v := range next.Parameters {
		if k == KeyDDLTime {
			continue
		}
		if old, ok := stored.Parameters[k]; !ok || old != v {
			if e.Set == nil {
				e.Set = map[string]string{}
			}
			e.Set[k] = v
		}
	}
	for k := range stored.Parameters {
		if _, ok := next.Parameters[k]; !ok && k != KeyDDLTime {
			e.Remove = append(e.Remove, k)
		}
	}
	slices.Sort(e.Remove)
	var have, want []*hm.FieldSchema
	if stored.Sd != nil {
		have = stored.Sd.Cols
	}
	if next.Sd != nil {
		want = next.Sd.Cols
	}
	if !sameColumns(have, want) && len(want) > 0 {
		for _, c := range want {
			e.Columns = append(e.Columns, Column{Name: c.Name, Type: c.Type, Comment: c.Comment})
		}
	}
	return e
}

func sameColumns(a, b []*hm.FieldSchema) bool {
	return slices.EqualFunc(a, b, func(x, y *hm.FieldSchema) bool {
		return x.Name == y.Name && x.Type == y.Type && x.Comment == y.Comment
	})
}

// Empty reports whether the edit changes nothing.
func (e Edit) Empty() bool { return len(e.Set) == 0 && len(e.Remove) == 0 && len(e.Columns) == 0 }

// Check refuses an edit deltasync would never make, so that a saved plan
// changed by hand cannot write through it what a sync never writes: a key
// the server owns (transient_lastDdlTime, numFiles, ...), EXTERNAL, a
// spark.sql.* key other than the provider (only "delta") and the schema
// and partition-column keys, a key both set and removed, an empty key or
// column.
func (e Edit) Check() error {
	var errs []error
	owned := func(k string) error {
		switch {
		case k == "":
			return errors.New("an empty parameter key")
		case ServerOwned(k):
			return fmt.Errorf("parameter %s is the metastore's own", k)
		case k == "EXTERNAL":
			return fmt.Errorf("parameter %s is never changed by deltasync", k)
		case strings.HasPrefix(k, "spark.sql.") && k != KeyProvider && !schemaKey(k):
			return fmt.Errorf("parameter %s is Spark's, never changed by deltasync", k)
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(e.Set)) {
		if err := owned(k); err != nil {
			errs = append(errs, fmt.Errorf("set: %w", err))
		}
		if k == KeyProvider && !strings.EqualFold(e.Set[k], ProviderDelta) {
			errs = append(errs, fmt.Errorf("set: %s %q: deltasync writes only %q", k, e.Set[k], ProviderDelta))
		}
	}
	for _, k := range e.Remove {
		if err := owned(k); err != nil {
			errs = append(errs, fmt.Errorf("remove: %w", err))
		}
		if k == KeyProvider {
			errs = append(errs, fmt.Errorf("remove: %s: a Delta table keeps its provider", k))
		}
		if _, ok := e.Set[k]; ok {
			errs = append(errs, fmt.Errorf("remove: %s is set too", k))
		}
	}
	for i, c := range e.Columns {
		if c.Name == "" || c.Type == "" {
			errs = append(errs, fmt.Errorf("columns[%d]: name and type are required", i))
		}
	}
	return errors.Join(errs...)
}

// ApplyTo is stored with the edit made: a copy, stored itself unchanged.
func (e Edit) ApplyTo(stored *hm.Table) *hm.Table {
	next := cloneTable(stored)
	maps.Copy(next.Parameters, e.Set)
	for _, k := range e.Remove {
		delete(next.Parameters, k)
	}
	if len(e.Columns) > 0 {
		if next.Sd == nil {
			next.Sd = hm.NewStorageDescriptor()
		}
		cols := make([]*hm.FieldSchema, len(e.Columns))
		for i, c := range e.Columns {
			cols[i] = &hm.FieldSchema{Name: c.Name, Type: c.Type, Comment: c.Comment}
		}
		next.Sd.Cols = cols
	}
	return next
}
