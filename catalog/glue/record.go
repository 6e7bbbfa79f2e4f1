package glue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// Shape is which writer's form a Delta table's Glue record has. Apply
// keeps it: each shape holds the log's state in its own places.
type Shape int

const (
	// ShapeSpark is what Spark (EMR, Glue jobs) leaves through the Glue Hive
	// client: provider=delta, the schema in spark.sql.sources.schema*, the
	// placeholder column `col array<string>`, the location in the serde
	// parameter `path` (sd.Location is a -__PLACEHOLDER__ path). Trino's
	// Delta tables have this shape too.
	ShapeSpark Shape = iota
	// ShapeAthena is Athena's CREATE … TBLPROPERTIES ('table_type'='DELTA'):
	// real columns and partition keys, the location in sd.Location, no
	// provider, no spark.sql.* keys.
	ShapeAthena
	// ShapeNative is the crawler's native Delta table (and XTable's, and
	// what deltasync registers): real columns and partition keys, and the
	// spark.sql.sources.* keys and serde `path` as well, so Spark, Trino,
	// Athena and Lake Formation all read it.
	ShapeNative
)

func (s Shape) String() string {
	switch s {
	case ShapeSpark:
		return "spark"
	case ShapeAthena:
		return "athena"
	case ShapeNative:
		return "native"
	}
	return "Shape(" + strconv.Itoa(int(s)) + ")"
}

// Record is what deltasync reads from a Glue table: the parts of it that
// must be true to the Delta log, and the VersionId its write is guarded
// with. Everything else is another client's and is neither compared nor
// changed.
type Record struct {
	Name  string // database.table
	Shape Shape
	// Location is the serde parameter `path` when set (Spark, Trino and
	// the crawler keep the real location there), else sd.Location.
	Location string
	// Schema is the log's schema JSON as the record holds it in
	// spark.sql.sources.schema (whole or in parts); HasSchema is false
	// without one (ShapeAthena: compare Columns instead; the record's real
	// columns are never turned back into a Delta schema, that mapping loses
	// nullability, metadata and types).
	Schema    string
	HasSchema bool
	// LogSchema is the deltasync.schema parameter of an Athena-shaped
	// record: the log's schema its columns were last made from ("" when
	// absent; see KeyLogSchema).
	LogSchema string
	// PartitionColumns are the partition keys' names (ShapeAthena,
	// ShapeNative) or Spark's spark.sql.sources.schema.partCol.N (ShapeSpark).
	PartitionColumns []string
	// Columns and PartitionKeys are the Glue columns (sd.Columns) and
	// partition keys as stored.
	Columns, PartitionKeys []Column
	// Comment is the `comment` parameter (Delta's catalog hook and Spark
	// write it there; the table's Description is left to people).
	Comment    string
	HasComment bool
	// Properties are the log properties the record holds: every delta.*
	// parameter (the version keys aside) and the keys deltasync recorded
	// writing (KeySyncedProperties).
	Properties map[string]string
	// Version and CommitTimestamp are delta.lastUpdateVersion and
	// delta.lastCommitTimestamp (ms); -1 when absent.
	Version, CommitTimestamp int64
	// VersionID is Glue's VersionId of the record: the guard of the write
	// planned from this read (Client.Update).
	VersionID string
	// TrinoVersion is trino_last_transaction_version ("" when absent).
	TrinoVersion string
}

// IsDelta reports whether readers take t for a Delta table (WhyNotDelta is "").
func IsDelta(t *types.Table) bool { return WhyNotDelta(t) == "" }

// WhyNotDelta says why t is not a Delta table deltasync may keep true to
// a log, or "" when it is: provider delta (Spark, Trino) or table_type
// DELTA (Athena), compared case-insensitively, and not a view, a resource
// link, a federated table or a crawler symlink-manifest table.
func WhyNotDelta(t *types.Table) string {
	p := t.Parameters
	switch {
	case t.TargetTable != nil:
		return "a resource link to " + aws.ToString(t.TargetTable.DatabaseName) + "." + aws.ToString(t.TargetTable.Name) + " (keep the target in sync instead)"
	case t.FederatedTable != nil:
		return "a federated table (read-only in Glue)"
	case t.ViewDefinition != nil || strings.EqualFold(aws.ToString(t.TableType), "VIRTUAL_VIEW"):
		return "a view"
	case !strings.EqualFold(p[KeyProvider], ProviderDelta) && !strings.EqualFold(p[KeyTableType], TableTypeDelta):
		if strings.EqualFold(p[KeyTableType], "ICEBERG") {
			return "an Iceberg table (table_type=ICEBERG)"
		}
		if t.StorageDescriptor != nil && strings.Contains(aws.ToString(t.StorageDescriptor.InputFormat), "SymlinkTextInputFormat") {
			return "a symlink-manifest table (the crawler's WriteManifest mode: readers read the manifest, not the log)"
		}
		return "neither spark.sql.sources.provider=delta nor table_type=DELTA"
	}
	return ""
}

// ShapeOf is t's shape (t a Delta table). With Spark's marks (a provider
// or spark.sql.sources.schema keys): real columns are ShapeNative, the
// placeholder or no columns ShapeSpark. Without them (Athena's
// table_type=DELTA alone) it is ShapeAthena, columns or not.
func ShapeOf(t *types.Table) Shape {
	var cols []types.Column
	if t.StorageDescriptor != nil {
		cols = t.StorageDescriptor.Columns
	}
	_, hasSchema, _ := ReadSchema(t.Parameters)
	switch spark := hasSchema || strings.EqualFold(t.Parameters[KeyProvider], ProviderDelta); {
	case !spark:
		return ShapeAthena
	case len(cols) == 0 || IsPlaceholder(cols):
		return ShapeSpark
	}
	return ShapeNative
}

// ReadRecord reads t's record. Bad stored values (a split schema missing a
// part, a version that is not a number) are errors naming the table and key.
func ReadRecord(t *types.Table) (Record, error) {
	p := t.Parameters
	r := Record{
		Name:            aws.ToString(t.DatabaseName) + "." + aws.ToString(t.Name),
		Shape:           ShapeOf(t),
		PartitionKeys:   columnsOf(t.PartitionKeys),
		Version:         -1,
		CommitTimestamp: -1,
		VersionID:       aws.ToString(t.VersionId),
		TrinoVersion:    p[KeyTrinoVersion],
	}
	fail := func(err error) (Record, error) { return Record{}, fmt.Errorf("glue: table %s: %w", r.Name, err) }
	if sd := t.StorageDescriptor; sd != nil {
		r.Columns = columnsOf(sd.Columns)
		r.Location = aws.ToString(sd.Location)
		if sd.SerdeInfo != nil && sd.SerdeInfo.Parameters[SerdePath] != "" {
			r.Location = sd.SerdeInfo.Parameters[SerdePath]
		}
	}
	var err error
	if r.Schema, r.HasSchema, err = ReadSchema(p); err != nil {
		return fail(err)
	}
	sparkParts, hasSparkParts, err := readPartitionKeys(p)
	if err != nil {
		return fail(err)
	}
	if r.Shape == ShapeSpark || (len(t.PartitionKeys) == 0 && hasSparkParts) {
		r.PartitionColumns = sparkParts
	} else {
		for _, k := range r.PartitionKeys {
			r.PartitionColumns = append(r.PartitionColumns, k.Name)
		}
	}
	if r.Shape == ShapeAthena {
		r.LogSchema = p[KeyLogSchema]
	}
	o, err := sparkprops.ReadOwned(p, reserved)
	if err != nil {
		return fail(err)
	}
	r.Comment, r.HasComment, r.Version, r.CommitTimestamp, r.Properties = o.Comment, o.HasComment, o.Version, o.CommitTimestamp, o.Properties
	return r, nil
}
