package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync/plan"
)

// A catalog whose server has no Delta API (older Unity Catalog releases,
// other implementations of the classic API) is handled read-only: its
// tables are read with the classic getTable, compared by the same Diff,
// and every drift is flagged, never written (there is no updateTable to
// write it with). Vended credentials come from the classic
// generateTemporaryTableCredentials.
//
// Nothing is sent to find out while the Delta API answers: only a loadTable
// answered 404 without the Delta API's own error type (a missing table is
// NoSuchTableException) is followed by one getConfig, and its ErrNoDeltaAPI
// marks the catalog read-only for the reconciler's lifetime (a server
// upgraded meanwhile is used read-only until the daemon restarts).

// readOnly reports whether catalogName is known to have no Delta API.
func (r *Reconciler) readOnly(catalogName string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noDeltaAPI[catalogName]
}

// ReadOnlyCatalogs lists, sorted, the catalogs found to have no Delta API
// and therefore handled read-only.
func (r *Reconciler) ReadOnlyCatalogs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.noDeltaAPI))
	for c := range r.noDeltaAPI {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// lacksDeltaAPI reports whether loadErr, a loadTable error for a table of
// catalogName, is the server having no Delta API at all, asking getConfig
// when the answer was a 404 the Delta API would not give.
func (r *Reconciler) lacksDeltaAPI(ctx context.Context, catalogName string, loadErr error) bool {
	var ae *uc.APIError
	if !errors.As(loadErr, &ae) || !uc.IsNotFound(loadErr) || strings.HasPrefix(ae.Type, "NoSuch") {
		return false
	}
	_, err := r.opts.Catalog.Config(ctx, catalogName)
	if !errors.Is(err, uc.ErrNoDeltaAPI) {
		return false
	}
	r.mu.Lock()
	if r.noDeltaAPI == nil {
		r.noDeltaAPI = map[string]bool{}
	}
	first := !r.noDeltaAPI[catalogName]
	r.noDeltaAPI[catalogName] = true
	r.mu.Unlock()
	if first {
		r.logger(ctx).Warn(whyReadOnly, zap.String("catalog", catalogName), zap.Error(err))
	}
	return true
}

// loadClassicRecord reads a table of a catalog without the Delta API with
// the classic getTable and describes it as the Delta API would.
func (r *Reconciler) loadClassicRecord(ctx context.Context, name catalog.TableName) (plan.Record, error) {
	ti, err := r.opts.Catalog.GetTable(ctx, name.String())
	if err != nil {
		return plan.Record{}, err
	}
	if why := notDelta(ti); why != "" {
		return plan.Record{}, flagged(ReasonUnsupported, fmt.Errorf("not a Delta table: %s", why))
	}
	return classicRecord(name, ti)
}

// classicRecord is a classic TableInfo in the Delta API's model: columns
// from each column's type_json, partition columns in partition_index
// order, the watermark from delta.lastUpdateVersion. The classic API has no
// etag; the record is never written.
func classicRecord(name catalog.TableName, ti *uc.TableInfo) (plan.Record, error) {
	cols, err := uc.ColumnsFromTypeJSON(ti.Columns)
	if err != nil {
		return plan.Record{}, fmt.Errorf("table %s: classic getTable columns: %w", name, err)
	}
	var parts []uc.ColumnInfo
	for _, c := range ti.Columns {
		if c.PartitionIndex != nil {
			parts = append(parts, c)
		}
	}
	sort.SliceStable(parts, func(i, j int) bool { return *parts[i].PartitionIndex < *parts[j].PartitionIndex })
	md := uc.TableMetadata{
		TableType: ti.TableType, TableUUID: ti.TableID, Location: ti.StorageLocation,
		CreatedTime: ti.CreatedAt, UpdatedTime: ti.UpdatedAt, Columns: cols, Properties: ti.Properties,
	}
	for _, c := range parts {
		md.PartitionColumns = append(md.PartitionColumns, c.Name)
	}
	if v, ok := ti.Properties[catalog.PropLastUpdateVersion]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return plan.Record{}, fmt.Errorf("table %s: classic property %s=%q is not a version", name, catalog.PropLastUpdateVersion, v)
		}
		md.LastCommitVersion = &n
	}
	return RecordOf(name, &uc.LoadTableResponse{Metadata: md}, ti.Comment, ti.StorageLocation), nil
}

// classicCredentials vends READ credentials for a table of a catalog
// without the Delta API, by table id.
func (r *Reconciler) classicCredentials(ctx context.Context, rec plan.Record) (uc.Credentials, error) {
	if rec.ID == "" {
		return uc.Credentials{}, fmt.Errorf("table %s: the classic getTable answer has no table_id to vend credentials for", rec.Name)
	}
	return r.opts.Catalog.TemporaryTableCredentials(ctx, rec.ID, uc.OperationRead)
}
