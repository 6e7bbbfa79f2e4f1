package glue

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
)

// KindName is the Glue kind's name in saved plans and reports
// (catalog.Kind.Name).
const KindName = "glue"

// DefaultKindName is KindOptions.Name's default, the first part of every
// table's name: awsdatacatalog, the name Athena (its data source
// AwsDataCatalog) and Redshift Spectrum already give the Glue Data
// Catalog, so a table's name in deltasync's rules, metrics and reports is
// the one its users query it by.
const DefaultKindName = "awsdatacatalog"

// KindOptions configure a Kind.
type KindOptions struct {
	// Name is the first part of every table's name, <Name>.<db>.<table>
	// (default DefaultKindName).
	Name string
	// IgnoreProperties are the property globs (path.Match) a write leaves
	// as stored (diff.ignore_properties).
	IgnoreProperties []string
}

// Kind is a Glue Data Catalog as a catalog.Kind: its databases are the
// schemas of one catalog named KindOptions.Name. A cycle lists each
// database with GetTables, whose pages carry whole records (ceil(N/100)
// calls for N tables), and plans from those: an unchanged table costs no
// call of its own. A write is UpdateTable of the whole record planned
// from with that record's VersionId (Glue's whole-table optimistic lock):
// a record that moved since is refused (catalog.ErrConflict), reloaded
// with GetTable and re-planned by the caller. Nothing is ever dropped and
// created again.
type Kind struct {
	c      *Client
	name   string
	ignore []string
}

var _ catalog.Kind = (*Kind)(nil)

// NewKind returns the Kind of the catalog c talks to. c is the caller's;
// the Kind keeps no state between calls but o.
func NewKind(c *Client, o KindOptions) *Kind {
	name := o.Name
	if name == "" {
		name = DefaultKindName
	}
	return &Kind{c: c, name: name, ignore: o.IgnoreProperties}
}

// Name is "glue".
func (*Kind) Name() string { return KindName }

// Preflight is nil: what Glue refuses (a value too long, a quota) is
// learned from its answer, which names it.
func (*Kind) Preflight(*catalog.Write) *catalog.Refusal { return nil }

// Fallback is nil: a write Glue refuses is never worked around (no drop
// and recreate, no write in parts).
func (*Kind) Fallback(*catalog.Read, catalog.LogState, *catalog.Edit, *catalog.Write, catalog.Refusal) []*catalog.Write {
	return nil
}

// Load reads a table's record: from's listed record when from carries one
// (the cycle's GetTables page), else GetTable. A record that is not Delta
// (WhyNotDelta) is an error wrapping catalog.ErrNotDelta, one that cannot
// be read (a split schema missing a part, a version that is not a number)
// one wrapping catalog.ErrUnsupported. The Read's Answer is the
// *types.Table, which Prepare writes back whole.
func (k *Kind) Load(ctx context.Context, name catalog.TableName, from *catalog.Listed) (*catalog.Read, error) {
	var t *types.Table
	if from != nil {
		t, _ = from.Answer.(*types.Table)
	}
	if t == nil {
		var err error
		if t, err = k.c.GetTable(ctx, name.Schema, name.Table); err != nil {
			return nil, err
		}
	}
	if why := WhyNotDelta(t); why != "" {
		return nil, &catalog.ClassError{Class: catalog.ErrNotDelta, Msg: "not a Delta table: " + why}
	}
	rec, err := recordOf(name, t)
	if err != nil {
		return nil, &catalog.ClassError{Class: catalog.ErrUnsupported, Err: err}
	}
	return &catalog.Read{Record: rec, Answer: t}, nil
}

// recordOf describes a Glue table as the neutral Record: the one place a
// Glue answer becomes one. The columns are the Delta schema the record
// holds (spark.sql.sources.schema; an Athena record's deltasync.schema;
// an empty struct when there is none, drift the first write fixes); the
// etag is the VersionId, the write's guard; the ID the name and create
// time (Glue has no table uuid).
func recordOf(name catalog.TableName, t *types.Table) (catalog.Record, error) {
	gr, err := ReadRecord(t)
	if err != nil {
		return catalog.Record{}, err
	}
	rec := catalog.Record{
		Name: name, Type: tableType(t), Location: gr.Location,
		PartitionColumns: gr.PartitionColumns, Properties: gr.Properties, Comment: gr.Comment,
		Etag: gr.VersionID, UpdatedTime: updatedAt(t), ID: tableID(name, t),
	}
	schema, has := gr.Schema, gr.HasSchema
	if !has && gr.LogSchema != "" {
		schema, has = gr.LogSchema, true
	}
	rec.SetFromParameters(schema, has, gr.Properties, gr.Version, gr.CommitTimestamp)
	return rec, nil
}

// tableID is a Glue record's identity, the table_id reports and the audit
// trail show: its name and CreateTime in ms (Glue has no table uuid), so
// a table dropped and created again under the name is another table.
func tableID(name catalog.TableName, t *types.Table) string {
	var ms int64
	if t.CreateTime != nil {
		ms = t.CreateTime.UnixMilli()
	}
	return strings.ToLower(name.String()) + "@" + strconv.FormatInt(ms, 10)
}

// tableType is the record's table type as reports show it: EXTERNAL for
// Glue's EXTERNAL_TABLE, else as stored. A MANAGED_TABLE is Spark's (its
// data under the warehouse), not a table Glue ratifies commits of: it is
// synced like any other.
func tableType(t *types.Table) string {
	if tt := aws.ToString(t.TableType); tt != "EXTERNAL_TABLE" {
		return tt
	}
	return catalog.TableTypeExternal
}

// updatedAt is Listed.UpdatedAt and Record.UpdatedTime: a non-zero 63-bit
// FNV-1a of the record's VersionId and CreateTime. Every UpdateTable moves
// the VersionId (whoever sends it, guarded or not), and a table created
// again has another CreateTime, so any change to the record changes it;
// 0 (the fast path cannot skip a read) for a record without a VersionId.
func updatedAt(t *types.Table) int64 {
	v := aws.ToString(t.VersionId)
	if v == "" {
		return 0
	}
	h := fnv.New64a()
	var b [8]byte
	if t.CreateTime != nil {
		binary.LittleEndian.PutUint64(b[:], uint64(t.CreateTime.UnixNano()))
	}
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(v))
	n := int64(h.Sum64() >> 1)
	if n == 0 {
		n = 1
	}
	return n
}

// Check is what a Glue record adds to the neutral comparison. Glue keeps
// the log's schema as text (spark.sql.sources.schema, or deltasync.schema
// in an Athena record), so the Delta API's column-type limits do not
// apply (AnyType). A log property named like a key Glue's readers or
// deltasync reserve cannot be synced (Unsupported). A record with real
// columns (Athena's and the crawler's shapes) holds the log's schema in
// its columns and partition keys too: a type Glue has no column type for
// is Unsupported, and columns that are not the log's (LogColumns,
// compared by SameColumns) are drift the write fixes (Schema) — what Lake
// Formation's grants and filters and Athena's views read.
func (k *Kind) Check(log catalog.LogState, read *catalog.Read) catalog.Check {
	c := catalog.Check{AnyType: true}
	for key := range log.Configuration {
		if reserved(key) || schemaKey(key) {
			c.Unsupported = append(c.Unsupported, fmt.Sprintf("property %s: a Glue key, not a log property a Glue record can hold", key))
		}
	}
	sort.Strings(c.Unsupported)
	t, _ := read.Answer.(*types.Table)
	if t == nil || ShapeOf(t) == ShapeSpark {
		return c
	}
	schema := log.SchemaString
	if schema == "" { // elided: the caller made sure the record's schema is it
		schema, _ = read.ColumnsAsLog()
	}
	cols, keys, err := LogColumns(schema, log.PartitionColumns)
	if err != nil {
		c.Unsupported = append(c.Unsupported, fmt.Sprintf("Glue columns: %v", err))
		return c
	}
	var have []types.Column
	if t.StorageDescriptor != nil {
		have = t.StorageDescriptor.Columns
	}
	if hc, hk := columnsOf(have), columnsOf(t.PartitionKeys); !SameColumns(hc, cols) || !SameColumns(hk, keys) {
		c.Schema = fmt.Sprintf("Glue columns (%s) partitioned by (%s), log: (%s) partitioned by (%s)",
			columnsText(hc), columnsText(hk), columnsText(cols), columnsText(keys))
	}
	return c
}

func columnsText(cs []Column) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + " " + c.Type
	}
	return strings.Join(parts, ", ")
}
