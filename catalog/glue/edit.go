package glue

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// Edit is one table's write as a saved plan keeps it (deltasync plan
// --out, then apply), as catalog/hms's Edit: the parameters set and
// removed and, when the write changes them, the columns and partition
// keys. Applied to the record it was computed from (EditOf), it gives
// exactly the TableInput the sync would have sent; every other field of
// the stored table is left as stored.
type Edit struct {
	Set    map[string]string `json:"set,omitempty"`
	Remove []string          `json:"remove,omitempty"`
	// Columns and PartitionKeys replace the record's when set (nil:
	// unchanged; a pointer to an empty list: none).
	Columns       *[]Column `json:"columns,omitempty"`
	PartitionKeys *[]Column `json:"partition_keys,omitempty"`
}

// EditOf is the edit that turns stored into next (next as Apply made it
// from stored).
func EditOf(stored *types.Table, next *types.TableInput) Edit {
	var e Edit
	for k, v := range next.Parameters {
		if old, ok := stored.Parameters[k]; !ok || old != v {
			if e.Set == nil {
				e.Set = map[string]string{}
			}
			e.Set[k] = v
		}
	}
	for k := range stored.Parameters {
		if _, ok := next.Parameters[k]; !ok {
			e.Remove = append(e.Remove, k)
		}
	}
	slices.Sort(e.Remove)
	var have, want []types.Column
	if stored.StorageDescriptor != nil {
		have = stored.StorageDescriptor.Columns
	}
	if next.StorageDescriptor != nil {
		want = next.StorageDescriptor.Columns
	}
	if cols := columnsOf(want); !SameColumns(columnsOf(have), cols) {
		e.Columns = &cols
	}
	if keys := columnsOf(next.PartitionKeys); !SameColumns(columnsOf(stored.PartitionKeys), keys) {
		e.PartitionKeys = &keys
	}
	return e
}

// Empty reports whether the edit changes nothing.
func (e Edit) Empty() bool {
	return len(e.Set) == 0 && len(e.Remove) == 0 && e.Columns == nil && e.PartitionKeys == nil
}

// Check refuses an edit deltasync would never make, so that a saved plan
// changed by hand cannot write through it what a sync never writes: a
// reader's marker (EXTERNAL, table_type, classification, the provider
// other than delta), another spark.sql.* key than the schema keys, the
// crawler's keys, a key both set and removed, an empty key or column.
func (e Edit) Check() error {
	var errs []error
	owned := func(k string) error {
		switch {
		case k == "":
			return errors.New("an empty parameter key")
		case k == "EXTERNAL" || k == KeyTableType || k == KeyClassification || k == "UPDATED_BY_CRAWLER" || strings.HasPrefix(k, "Crawler"):
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
	for name, cols := range map[string]*[]Column{"columns": e.Columns, "partition_keys": e.PartitionKeys} {
		if cols == nil {
			continue
		}
		for i, c := range *cols {
			if c.Name == "" || c.Type == "" {
				errs = append(errs, fmt.Errorf("%s[%d]: name and type are required", name, i))
			}
		}
	}
	return errors.Join(errs...)
}

// ApplyTo is the TableInput that writes stored with the edit made (every
// other field copied by InputOf; a replaced column keeps the parameters
// of the stored column of its name). stored is not modified.
func (e Edit) ApplyTo(stored *types.Table) *types.TableInput {
	in := InputOf(stored)
	if in.Parameters == nil {
		in.Parameters = map[string]string{}
	}
	maps.Copy(in.Parameters, e.Set)
	for _, k := range e.Remove {
		delete(in.Parameters, k)
	}
	if e.Columns != nil {
		if in.StorageDescriptor == nil {
			in.StorageDescriptor = &types.StorageDescriptor{}
		}
		in.StorageDescriptor.Columns = glueColumns(*e.Columns, in.StorageDescriptor.Columns)
	}
	if e.PartitionKeys != nil {
		in.PartitionKeys = glueColumns(*e.PartitionKeys, in.PartitionKeys)
	}
	return in
}
