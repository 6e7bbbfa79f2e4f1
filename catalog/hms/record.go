package hms

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// Record is what deltasync reads from an HMS table: the parts of it that
// must be true to the Delta log. Everything else in the table is another
// client's and is neither compared nor changed.
type Record struct {
	Name string // catalog.db.table
	// Provider is spark.sql.sources.provider as stored; IsDelta compares it.
	Provider string
	// Location is the serde parameter `path`: the table's real location.
	// (sd.location of a Spark EXTERNAL table is a -__PLACEHOLDER__ path.)
	Location string
	// Schema is the schema JSON (Spark's StructType JSON = the log's
	// schemaString), joined from its parts; HasSchema is false without one.
	Schema    string
	HasSchema bool
	// PartitionColumns as Spark stores them (numPartCols / partCol.N).
	PartitionColumns []string
	Comment          string
	HasComment       bool
	// Properties are the log properties the record holds: every delta.*
	// parameter (the version keys aside) and the keys deltasync recorded
	// having written (KeySyncedProperties).
	Properties map[string]string
	// Version and CommitTimestamp are delta.lastUpdateVersion and
	// delta.lastCommitTimestamp (ms); -1 when absent.
	Version, CommitTimestamp int64
	// Columns are the HMS columns (sd.cols).
	Columns []*hm.FieldSchema
	// TrinoVersion is trino_last_transaction_version ("" when absent).
	TrinoVersion string
}

// IsDelta reports whether readers take t for a Delta table: provider delta
// (case-insensitive, as Spark and Trino compare it).
func IsDelta(t *hm.Table) bool {
	return strings.EqualFold(t.Parameters[KeyProvider], ProviderDelta)
}

// ReadRecord reads t's record. Bad stored values (a split schema missing a
// part, a version that is not a number) are errors naming the table and key.
func ReadRecord(t *hm.Table) (Record, error) {
	p := t.Parameters
	r := Record{
		Name:            (&Table{Thrift: t}).Name(),
		Provider:        p[KeyProvider],
		Version:         -1,
		CommitTimestamp: -1,
		TrinoVersion:    p[KeyTrinoVersion],
	}
	fail := func(err error) (Record, error) { return Record{}, fmt.Errorf("hms: table %s: %w", r.Name, err) }
	if t.Sd != nil {
		r.Columns = t.Sd.Cols
		if t.Sd.SerdeInfo != nil {
			r.Location = t.Sd.SerdeInfo.Parameters[SerdePath]
		}
	}
	var err error
	if r.Schema, r.HasSchema, err = ReadSchema(p); err != nil {
		return fail(err)
	}
	if r.PartitionColumns, err = ReadPartitionColumns(p); err != nil {
		return fail(err)
	}
	o, err := sparkprops.ReadOwned(p, reserved)
	if err != nil {
		return fail(err)
	}
	r.Comment, r.HasComment, r.Version, r.CommitTimestamp, r.Properties = o.Comment, o.HasComment, o.Version, o.CommitTimestamp, o.Properties
	return r, nil
}

// Desired is the record the log calls for, as sync computes it.
type Desired struct {
	// Location is the table's root (the serde `path`); only NewExternalTable
	// writes it: an existing record's location is what deltasync read from.
	Location string
	// Schema is the log's schemaString (Spark's StructType JSON).
	Schema           string
	PartitionColumns []string
	// Comment is the log's description ("" = none: the key is removed).
	Comment string
	// Properties are the log's configuration plus the protocol keys
	// (delta.minReaderVersion, delta.minWriterVersion, delta.feature.*), as
	// Delta's catalog-update hook writes them.
	Properties map[string]string
	// Version and CommitTimestamp (ms) of the log snapshot.
	Version, CommitTimestamp int64
	Columns                  Columns
}

// Apply returns a copy of stored with every parameter deltasync owns set
// to d — and nothing else changed: every other parameter, the owner, the
// serde and storage fields (sd.location included), partition keys and the
// table type stay as stored. Owned: the provider, the schema keys (stale
// parts removed), the partition-column keys, the comment, the version
// keys, the log properties (delta.* keys, plus other keys the log has or
// deltasync recorded writing — a key the log dropped is removed), and
// Trino's cache keys, removed unless trino_last_transaction_version is
// d.Version (Trino's cache format is Trino's own; without it Trino reads
// the log). With ColumnsReal the columns become the log's schema mapped to
// Hive types. The result is a new table; stored is not modified.
func Apply(stored *hm.Table, d Desired) (*hm.Table, error) {
	name := (&Table{Thrift: stored}).Name()
	for k := range d.Properties {
		if reserved(k) || schemaKey(k) {
			return nil, fmt.Errorf("hms: table %s: log property %q is a metastore key deltasync cannot sync", name, k)
		}
	}
	synced, err := sparkprops.SyncedProperties(stored.Parameters)
	if err != nil {
		return nil, fmt.Errorf("hms: table %s: %w", name, err)
	}
	next := cloneTable(stored)
	p := next.Parameters
	for k := range p {
		if schemaKey(k) || strings.HasPrefix(k, "delta.") && !reserved(k) || slices.Contains(synced, k) && !reserved(k) {
			delete(p, k)
		}
	}
	p[KeyProvider] = ProviderDelta
	maps.Copy(p, SplitSchema(d.Schema))
	maps.Copy(p, partitionParams(d.PartitionColumns))
	sparkprops.SetOwned(p, sparkprops.Owned{Comment: d.Comment, Properties: d.Properties, Version: d.Version, CommitTimestamp: d.CommitTimestamp})
	if d.Columns == ColumnsReal {
		cols, err := HiveColumns(d.Schema)
		if err != nil {
			return nil, fmt.Errorf("hms: table %s: %w", name, err)
		}
		if next.Sd == nil {
			next.Sd = hm.NewStorageDescriptor()
		}
		next.Sd.Cols = cols
	}
	return next, nil
}

// NewExternalTable is the record deltasync registers for a Delta table at
// d.Location (a register rule's create): EXTERNAL, with Spark's storage fields for a Delta
// data-source table, the real location in both the serde `path` (what
// Spark and Trino read) and sd.location (what Hive-type readers read),
// and d's owned parameters.
func NewExternalTable(db, name string, d Desired) (*hm.Table, error) {
	if d.Location == "" {
		return nil, fmt.Errorf("hms: table %s.%s: no location to register", db, name)
	}
	t := hm.NewTable()
	t.DbName, t.TableName, t.TableType = db, name, "EXTERNAL_TABLE"
	t.PartitionKeys = []*hm.FieldSchema{}
	t.Parameters = map[string]string{"EXTERNAL": "TRUE"}
	sd := hm.NewStorageDescriptor()
	sd.Cols = PlaceholderColumns()
	sd.Location = d.Location
	sd.InputFormat = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	sd.OutputFormat = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	sd.SerdeInfo = &hm.SerDeInfo{
		SerializationLib: "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
		Parameters:       map[string]string{SerdePath: d.Location, "serialization.format": "1"},
	}
	sd.BucketCols, sd.SortCols, sd.Parameters = []string{}, []*hm.Order{}, map[string]string{}
	t.Sd = sd
	return Apply(t, d)
}

// cloneTable copies what Apply may change (parameters, the storage
// descriptor and its serde) so stored is left as read; the rest is shared.
func cloneTable(t *hm.Table) *hm.Table {
	n := *t
	n.Parameters = maps.Clone(t.Parameters)
	if n.Parameters == nil {
		n.Parameters = map[string]string{}
	}
	if t.Sd != nil {
		sd := *t.Sd
		sd.Cols = slices.Clone(t.Sd.Cols)
		sd.Parameters = maps.Clone(t.Sd.Parameters)
		if t.Sd.SerdeInfo != nil {
			si := *t.Sd.SerdeInfo
			si.Parameters = maps.Clone(t.Sd.SerdeInfo.Parameters)
			sd.SerdeInfo = &si
		}
		n.Sd = &sd
	}
	return &n
}
