package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// RecordOf describes Unity Catalog's answers for a table as the neutral
// Record: lt is the Delta API loadTable answer, comment and
// storageLocation the classic TableInfo's (the Delta API has neither). It
// is the one place a Unity Catalog answer becomes a Record: the protocol
// and the clustering columns are read from the properties the server
// derives them into, the UniForm pointer from loadTable's uniform.
func RecordOf(name catalog.TableName, lt *LoadTableResponse, comment, storageLocation string) catalog.Record {
	md := &lt.Metadata
	rec := catalog.Record{
		Name: name, ID: md.TableUUID, Type: md.TableType, CatalogManaged: md.CatalogManaged(),
		Location: md.Location, StorageLocation: storageLocation,
		Columns: md.Columns, PartitionColumns: md.PartitionColumns, Properties: md.Properties, Comment: comment,
		LastCommitVersion: md.LastCommitVersion, LastCommitTimestampMs: md.LastCommitTimestampMs,
		LatestTableVersion: lt.LatestTableVersion, Etag: md.Etag, UpdatedTime: md.UpdatedTime,
	}
	if p, err := catalog.ProtocolFromProperties(md.Properties); err == nil {
		rec.Protocol = &p
	}
	if cols, _, err := catalog.ClusteringFromProperties(md.Properties); err != nil {
		rec.ClusteringProblem = err.Error()
	} else {
		rec.Clustering = cols
	}
	for _, c := range lt.Commits {
		rec.Commits = append(rec.Commits, catalog.Commit{Version: c.Version, FileName: c.FileName})
	}
	rec.Iceberg = icebergPointerOf(lt.Uniform)
	return rec
}

// icebergPointerOf reads loadTable's uniform.iceberg, as far as it
// decodes; nil when there is none.
func icebergPointerOf(uniform json.RawMessage) *catalog.IcebergPointer {
	if len(uniform) == 0 {
		return nil
	}
	var ptr struct {
		Iceberg *struct {
			MetadataLocation string `json:"metadata-location"`
			ConvertedVersion *int64 `json:"converted-delta-version"`
		} `json:"iceberg"`
	}
	_ = json.Unmarshal(uniform, &ptr)
	if ptr.Iceberg == nil {
		return nil
	}
	return &catalog.IcebergPointer{MetadataLocation: ptr.Iceberg.MetadataLocation, ConvertedVersion: ptr.Iceberg.ConvertedVersion}
}

// notDeltaError is a record that is not a Delta table's: its message is
// the reason a reconcile flags the table with ("not a Delta table: ...");
// it answers errors.Is(catalog.ErrNotDelta) and unwraps to the server's
// answer, if any.
type notDeltaError struct {
	why string
	err error
}

func (e *notDeltaError) Error() string { return "not a Delta table: " + e.why }

func (e *notDeltaError) Unwrap() error { return e.err }

func (e *notDeltaError) Is(target error) bool { return target == catalog.ErrNotDelta }

// Load reads both catalog views of a table: the Delta API record and the
// classic TableInfo (for the comment). When the table was listed this
// cycle (from) and the record's updated-time is the listed updated_at,
// nothing changed in between (every change advances it, §4.4): the
// listing's comment and storage location are current and GetTable is not
// sent.
//
// A catalog without the Delta API is read with the classic API instead
// (ReadOnlyCatalogs). A table that is not Delta (loadTable's 400
// UnsupportedTableFormatException, or a classic record of another type or
// format) is an error answering catalog.ErrNotDelta, "not a Delta table:
// ..."; the others are the client's.
func (k *Kind) Load(ctx context.Context, name catalog.TableName, from *catalog.Listed) (*catalog.Read, error) {
	rec, err := k.load(ctx, name, from)
	if err != nil {
		var nd *notDeltaError
		if !errors.As(err, &nd) && IsUnsupportedFormat(err) {
			return nil, &notDeltaError{why: err.Error(), err: err}
		}
		return nil, err
	}
	return &catalog.Read{Record: rec}, nil
}

func (k *Kind) load(ctx context.Context, name catalog.TableName, listed *catalog.Listed) (catalog.Record, error) {
	if k.readOnly(name.Catalog) {
		return k.loadClassicRecord(ctx, name)
	}
	lt, err := k.c.LoadTable(ctx, name)
	if err != nil {
		if k.lacksDeltaAPI(ctx, name.Catalog, err) {
			return k.loadClassicRecord(ctx, name)
		}
		return catalog.Record{}, err
	}
	if listed != nil && listed.UpdatedAt != 0 && lt.Metadata.UpdatedTime == listed.UpdatedAt {
		return RecordOf(name, lt, listed.Comment, listed.Location), nil
	}
	ti, err := k.c.GetTable(ctx, name.String())
	if err != nil {
		return catalog.Record{}, err
	}
	return RecordOf(name, lt, ti.Comment, ti.StorageLocation), nil
}

// A catalog whose server has no Delta API (older Unity Catalog releases,
// other implementations of the classic API) is handled read-only: its
// tables are read with the classic getTable, compared by the same Diff,
// and every drift is flagged, never written (there is no updateTable to
// write it with; Check says so). Vended credentials come from the classic
// generateTemporaryTableCredentials.
//
// Nothing is sent to find out while the Delta API answers: only a loadTable
// answered 404 without the Delta API's own error type (a missing table is
// NoSuchTableException) is followed by one getConfig, and its ErrNoDeltaAPI
// marks the catalog read-only for the Kind's lifetime (a server upgraded
// meanwhile is used read-only until the daemon restarts).

// readOnly reports whether catalogName is known to have no Delta API.
func (k *Kind) readOnly(catalogName string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.noDeltaAPI[catalogName]
}

// ReadOnlyCatalogs lists, sorted, the catalogs found to have no Delta API
// and therefore handled read-only.
func (k *Kind) ReadOnlyCatalogs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.noDeltaAPI))
	for c := range k.noDeltaAPI {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// lacksDeltaAPI reports whether loadErr, a loadTable error for a table of
// catalogName, is the server having no Delta API at all, asking getConfig
// when the answer was a 404 the Delta API would not give.
func (k *Kind) lacksDeltaAPI(ctx context.Context, catalogName string, loadErr error) bool {
	var ae *APIError
	if !errors.As(loadErr, &ae) || !IsNotFound(loadErr) || strings.HasPrefix(ae.Type, "NoSuch") {
		return false
	}
	_, err := k.c.Config(ctx, catalogName)
	if !errors.Is(err, ErrNoDeltaAPI) {
		return false
	}
	k.mu.Lock()
	if k.noDeltaAPI == nil {
		k.noDeltaAPI = map[string]bool{}
	}
	first := !k.noDeltaAPI[catalogName]
	k.noDeltaAPI[catalogName] = true
	k.mu.Unlock()
	if first && k.opts.OnReadOnly != nil {
		k.opts.OnReadOnly(ctx, catalogName, err)
	}
	return true
}

// loadClassicRecord reads a table of a catalog without the Delta API with
// the classic getTable and describes it as the Delta API would.
func (k *Kind) loadClassicRecord(ctx context.Context, name catalog.TableName) (catalog.Record, error) {
	ti, err := k.c.GetTable(ctx, name.String())
	if err != nil {
		return catalog.Record{}, err
	}
	if why := notDelta(ti); why != "" {
		return catalog.Record{}, &notDeltaError{why: why}
	}
	return classicRecord(name, ti)
}

// classicRecord is a classic TableInfo in the Delta API's model: columns
// from each column's type_json, partition columns in partition_index
// order, the watermark from delta.lastUpdateVersion. The classic API has no
// etag; the record is never written.
func classicRecord(name catalog.TableName, ti *TableInfo) (catalog.Record, error) {
	cols, err := ColumnsFromTypeJSON(ti.Columns)
	if err != nil {
		return catalog.Record{}, fmt.Errorf("table %s: classic getTable columns: %w", name, err)
	}
	var parts []ColumnInfo
	for _, c := range ti.Columns {
		if c.PartitionIndex != nil {
			parts = append(parts, c)
		}
	}
	sort.SliceStable(parts, func(i, j int) bool { return *parts[i].PartitionIndex < *parts[j].PartitionIndex })
	md := TableMetadata{
		TableType: ti.TableType, TableUUID: ti.TableID, Location: ti.StorageLocation,
		CreatedTime: ti.CreatedAt, UpdatedTime: ti.UpdatedAt, Columns: cols, Properties: ti.Properties,
	}
	for _, c := range parts {
		md.PartitionColumns = append(md.PartitionColumns, c.Name)
	}
	if v, ok := ti.Properties[catalog.PropLastUpdateVersion]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return catalog.Record{}, fmt.Errorf("table %s: classic property %s=%q is not a version", name, catalog.PropLastUpdateVersion, v)
		}
		md.LastCommitVersion = &n
	}
	return RecordOf(name, &LoadTableResponse{Metadata: md}, ti.Comment, ti.StorageLocation), nil
}

// ReadCredentials vends READ credentials for rec's location: the Delta
// API's getTableCredentials by name, or, for a catalog without the Delta
// API, the classic generateTemporaryTableCredentials by table id.
func (k *Kind) ReadCredentials(ctx context.Context, rec catalog.Record) (catalog.Credentials, error) {
	if k.readOnly(rec.Name.Catalog) {
		return k.classicCredentials(ctx, rec)
	}
	return k.c.ReadCredentials(ctx, rec.Name, rec.Location)
}

// classicCredentials vends READ credentials for a table of a catalog
// without the Delta API, by table id.
func (k *Kind) classicCredentials(ctx context.Context, rec catalog.Record) (Credentials, error) {
	if rec.ID == "" {
		return Credentials{}, fmt.Errorf("table %s: the classic getTable answer has no table_id to vend credentials for", rec.Name)
	}
	return k.c.TemporaryTableCredentials(ctx, rec.ID, OperationRead)
}
