package hms

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
)

// KindName is the Hive Metastore kind's name in saved plans and reports
// (catalog.Kind.Name).
const KindName = "hive-metastore"

// DefaultKindName is KindOptions.Name's default: the first part of every
// table's name.
const DefaultKindName = "hive"

// KindOptions configure a Kind.
type KindOptions struct {
	// Name is the first part of every table's name, <Name>.<db>.<table>:
	// what the selection rules, metrics and reports see (default "hive").
	Name string
	// Columns is what the HMS columns hold (default ColumnsPlaceholder).
	Columns Columns
	// LockWait bounds the wait for the table lock on HMS 3 (default 10s).
	LockWait time.Duration
	// IgnoreProperties are the property globs (path.Match) a write leaves
	// as stored (diff.ignore_properties).
	IgnoreProperties []string
	// Now is the clock a write's transient_lastDdlTime is taken from
	// (default time.Now).
	Now func() time.Time
}

// Kind is a Hive Metastore as a catalog.Kind: databases are the schemas of
// one catalog named KindOptions.Name. A cycle reads each database's
// selected tables in batches (get_table_objects_by_name_req, ceil(N/100)
// calls for N tables) and plans from those records: an unchanged table
// costs no call of its own. A write is an edit of the record planned from,
// guarded by that record's fingerprint, transient_lastDdlTime and identity
// and then by WriteFrom; a conflict is reloaded with get_table_req and
// re-planned by the caller.
type Kind struct {
	c      *Client
	name   string
	cols   Columns
	wait   time.Duration
	ignore []string
	now    func() time.Time
}

var _ catalog.Kind = (*Kind)(nil)

// NewKind returns the Kind of the metastore c talks to. c is the caller's:
// the Kind does not close it, and keeps no state between calls but o.
func NewKind(c *Client, o KindOptions) *Kind {
	name := o.Name
	if name == "" {
		name = DefaultKindName
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Kind{c: c, name: name, cols: o.Columns, wait: o.LockWait, ignore: o.IgnoreProperties, now: now}
}

// Name is "hive-metastore".
func (*Kind) Name() string { return KindName }

// Preflight is nil: the metastore has no limits known before sending.
func (*Kind) Preflight(*catalog.Write) *catalog.Refusal { return nil }

// Fallback is nil: a write the metastore refuses is never worked around
// (no drop and recreate, no write in parts).
func (*Kind) Fallback(*catalog.Read, catalog.LogState, *catalog.Edit, *catalog.Write, catalog.Refusal) []*catalog.Write {
	return nil
}

// Load reads a table's record: from's batch-read table when from carries
// one (the cycle's listing), else get_table_req. A record that is not
// Delta is an error wrapping catalog.ErrNotDelta, one that cannot be read
// as the neutral Record (a split schema missing a part, a version that is
// not a number) one wrapping catalog.ErrUnsupported. The Read's Answer is
// the *Table, which Prepare edits.
func (k *Kind) Load(ctx context.Context, name catalog.TableName, from *catalog.Listed) (*catalog.Read, error) {
	var tbl *Table
	if from != nil {
		tbl, _ = from.Answer.(*Table)
	}
	if tbl == nil {
		var err error
		if tbl, err = k.c.GetTable(ctx, name.Schema, name.Table); err != nil {
			return nil, err
		}
	}
	if !IsDelta(tbl.Thrift) {
		return nil, &catalog.ClassError{Class: catalog.ErrNotDelta, Msg: "not a Delta table: " + notDelta(tbl.Thrift)}
	}
	rec, err := recordOf(name, tbl)
	if err != nil {
		return nil, &catalog.ClassError{Class: catalog.ErrUnsupported, Err: err}
	}
	return &catalog.Read{Record: rec, Answer: tbl}, nil
}

// notDelta says why t is not a Delta table.
func notDelta(t *hm.Table) string {
	if p := t.Parameters[KeyProvider]; p != "" {
		return fmt.Sprintf("provider %s is not Delta", p)
	}
	return fmt.Sprintf("table type %s without %s=delta is not a Delta table", t.TableType, KeyProvider)
}

// recordOf describes an HMS table as the neutral Record: the one place an
// HMS answer becomes one. The location is the serde parameter path
// (sd.location of a Spark EXTERNAL table is a placeholder), the columns
// the schema in spark.sql.sources.schema (whole or in parts; an empty
// struct when there is none), the protocol and clustering the properties
// Delta's catalog hook writes them as, the watermark
// delta.lastUpdateVersion / delta.lastCommitTimestamp. The etag is
// transient_lastDdlTime, the write's guard; the ID tableID.
func recordOf(name catalog.TableName, t *Table) (catalog.Record, error) {
	hr, err := ReadRecord(t.Thrift)
	if err != nil {
		return catalog.Record{}, err
	}
	rec := catalog.Record{
		Name: name, Type: tableType(t.Thrift), Location: hr.Location,
		PartitionColumns: hr.PartitionColumns, Properties: hr.Properties, Comment: hr.Comment,
		Etag: t.Thrift.Parameters[KeyDDLTime], UpdatedTime: fingerprint(t.Thrift), ID: tableID(name, t.Thrift),
	}
	rec.SetFromParameters(hr.Schema, hr.HasSchema, hr.Properties, hr.Version, hr.CommitTimestamp)
	return rec, nil
}

// tableID is an HMS record's identity, the table_id reports and the audit
// trail show: its name and createTime (HMS has no table uuid), so a table
// dropped and created again under the name is another table.
func tableID(name catalog.TableName, t *hm.Table) string {
	return fmt.Sprintf("%s@%d", strings.ToLower(name.String()), t.CreateTime)
}

// tableType is the record's table type as reports show it: EXTERNAL for
// HMS's EXTERNAL_TABLE (Unity Catalog's spelling), else as stored. A
// MANAGED_TABLE is Spark's (its data under the warehouse), not a table
// the metastore ratifies commits of: it is synced like any other.
func tableType(t *hm.Table) string {
	if t.TableType == "EXTERNAL_TABLE" {
		return catalog.TableTypeExternal
	}
	return t.TableType
}

// location is where a stored table's data is: the serde path of a Delta
// table (its sd.location is a placeholder), else sd.location.
func location(t *hm.Table) string {
	if t.Sd == nil {
		return ""
	}
	if t.Sd.SerdeInfo != nil {
		if p := t.Sd.SerdeInfo.Parameters[SerdePath]; p != "" {
			return p
		}
	}
	if IsDelta(t) {
		return "" // a Delta table without a path names no location
	}
	return t.Sd.Location
}

// fingerprint is a non-zero 63-bit FNV-1a of what a reconcile compares
// or writes in t: every parameter, the table type, the serde parameters,
// the columns. It is Listed.UpdatedAt (not a time): any change to them
// changes it, whether or not the writer moved transient_lastDdlTime.
func fingerprint(t *hm.Table) int64 {
	h := fnv.New64a()
	w := func(s string) {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(s)))
		_, _ = h.Write(n[:])
		_, _ = h.Write([]byte(s))
	}
	kv := func(m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w(k)
			w(m[k])
		}
	}
	kv(t.Parameters)
	w(t.TableType)
	if t.Sd != nil {
		for _, c := range t.Sd.Cols {
			w(c.Name)
			w(c.Type)
			w(c.Comment)
		}
		if t.Sd.SerdeInfo != nil {
			kv(t.Sd.SerdeInfo.Parameters)
		}
	}
	v := int64(h.Sum64() >> 1)
	if v == 0 {
		v = 1
	}
	return v
}

// recordFingerprint is fingerprint as a write's request carries it (hex).
func recordFingerprint(t *hm.Table) string { return strconv.FormatInt(fingerprint(t), 16) }

// Check is what an HMS record adds to the neutral comparison: it stores
// the schema as the log's own JSON text, so no log type is one it cannot
// store (AnyType: Unity Catalog's column-type limits do not apply), and a
// log property named like a metastore key (comment, spark.sql.*, a
// server-owned key) is one it cannot sync (Unsupported); with columns:
// real the HMS columns are compared with the log's schema mapped to Hive
// types (Schema). The caller takes Schema as drift only when the plan has
// no schema change and no problems of its own (as sync did).
func (k *Kind) Check(log catalog.LogState, read *catalog.Read) catalog.Check {
	c := catalog.Check{AnyType: true}
	for key := range log.Configuration {
		if metastoreKey(key) {
			c.Unsupported = append(c.Unsupported, fmt.Sprintf("property %s: a metastore key, not a log property HMS can hold", key))
		}
	}
	sort.Strings(c.Unsupported)
	if k.cols != ColumnsReal {
		return c
	}
	schema := log.SchemaString
	if schema == "" {
		schema, _ = read.ColumnsAsLog()
	}
	want, err := HiveColumns(schema)
	if err != nil {
		c.Unsupported = append(c.Unsupported, fmt.Sprintf("columns: real: %v", err))
		return c
	}
	tbl, _ := read.Answer.(*Table)
	var have []*hm.FieldSchema
	if tbl != nil && tbl.Thrift.Sd != nil {
		have = tbl.Thrift.Sd.Cols
	}
	c.Schema = columnsDiffer(want, have)
	return c
}

// metastoreKey reports whether a log property is named like a key the
// metastore record holds for itself: one HMS cannot sync.
func metastoreKey(key string) bool {
	return ServerOwned(key) || strings.HasPrefix(key, "spark.sql.") || key == KeyComment ||
		key == KeySyncedProperties || key == KeyTrinoVersion || key == KeyTrinoSchema || key == "EXTERNAL"
}

// columnsDiffer says how the HMS columns differ from want ("" if not).
func columnsDiffer(want, have []*hm.FieldSchema) string {
	text := func(cs []*hm.FieldSchema) string {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = c.Name + " " + c.Type
		}
		return strings.Join(parts, ", ")
	}
	if len(want) == len(have) {
		same := true
		for i := range want {
			if !strings.EqualFold(want[i].Name, have[i].Name) || !strings.EqualFold(want[i].Type, have[i].Type) || want[i].Comment != have[i].Comment {
				same = false
				break
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("HMS columns (columns: real): (%s), log: (%s)", text(have), text(want))
}
