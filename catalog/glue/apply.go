package glue

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/internal/sparkprops"
)

// Desired is the record the log calls for, as sync computes it.
type Desired struct {
	// Location is the table's root; only NewTableInput writes it: an
	// existing record's location is what deltasync read from.
	Location string
	// Schema is the log's schemaString (Spark's StructType JSON).
	Schema           string
	PartitionColumns []string
	// Comment is the log's description ("" = none: the key is removed).
	Comment string
	// Properties are the log's configuration plus the protocol keys
	// (delta.minReaderVersion, delta.minWriterVersion, delta.feature.*).
	Properties map[string]string
	// Version and CommitTimestamp (ms) of the log snapshot.
	Version, CommitTimestamp int64
}

// Apply returns the TableInput that writes stored back with every part
// deltasync owns set to d, in stored's shape, and nothing else changed:
// every other TableInput field (owner, description, retention, table
// type, storage and serde fields, sd.Location included, additional
// locations, column and storage parameters, every other parameter) is
// copied as stored (InputOf). Owned, by shape:
//
//   - every shape: the comment parameter, delta.lastUpdateVersion and
//     delta.lastCommitTimestamp, the log properties (delta.* keys, and
//     other keys the log has or deltasync recorded writing — a key the log
//     dropped is removed), and Trino's cache keys, removed unless
//     trino_last_transaction_version is d.Version;
//   - ShapeSpark and ShapeNative: spark.sql.sources.schema (its stored
//     form, whole or in parts, kept; stale parts removed), and the
//     spark.sql.sources.schema.partCol keys (ShapeNative: only if it has
//     them);
//   - ShapeAthena and ShapeNative: the columns and partition keys
//     (LogColumns; each column's parameters kept by name);
//   - ShapeAthena: deltasync.schema, the log's schema the columns are
//     made from (KeyLogSchema: the one place an Athena record can say
//     which Delta schema it holds).
//
// ShapeSpark's placeholder column is never replaced, and no shape gains
// keys of another (no provider or serde path is added to an Athena record).
// stored is not modified. A record that is not a Delta table (WhyNotDelta)
// or a log property named like a key deltasync or another client reserves
// is an error naming the table.
func Apply(stored *types.Table, d Desired) (*types.TableInput, error) {
	name := aws.ToString(stored.DatabaseName) + "." + aws.ToString(stored.Name)
	if why := WhyNotDelta(stored); why != "" {
		return nil, fmt.Errorf("glue: table %s: not a Delta table: %s", name, why)
	}
	in, err := apply(stored, ShapeOf(stored), d)
	if err != nil {
		return nil, fmt.Errorf("glue: table %s: %w", name, err)
	}
	return in, nil
}

func apply(stored *types.Table, shape Shape, d Desired) (*types.TableInput, error) {
	for k := range d.Properties {
		if reserved(k) || schemaKey(k) {
			return nil, fmt.Errorf("log property %q is a Glue key deltasync cannot sync", k)
		}
	}
	synced, err := sparkprops.SyncedProperties(stored.Parameters)
	if err != nil {
		return nil, err
	}
	in := InputOf(stored)
	if in.Parameters == nil {
		in.Parameters = map[string]string{}
	}
	p := in.Parameters
	_, hadPartCols := p[KeyNumPartCols]
	_, splitForm := p[KeySchemaNumParts]
	for k := range p {
		if schemaKey(k) && shape != ShapeAthena || strings.HasPrefix(k, "delta.") && !reserved(k) || slices.Contains(synced, k) && !reserved(k) {
			delete(p, k)
		}
	}
	if shape != ShapeAthena {
		maps.Copy(p, SplitSchema(d.Schema, splitForm))
		if shape == ShapeSpark || hadPartCols {
			maps.Copy(p, partitionParams(d.PartitionColumns))
		}
	}
	if shape != ShapeSpark {
		if err := setColumns(in, d); err != nil {
			return nil, err
		}
	}
	if shape == ShapeAthena {
		p[KeyLogSchema] = d.Schema
	} else {
		delete(p, KeyLogSchema)
	}
	sparkprops.SetOwned(p, sparkprops.Owned{Comment: d.Comment, Properties: d.Properties, Version: d.Version, CommitTimestamp: d.CommitTimestamp})
	return in, nil
}

// setColumns sets in's columns and partition keys to the log's, keeping
// the parameters of a column of the same name (case-insensitive).
func setColumns(in *types.TableInput, d Desired) error {
	cols, keys, err := LogColumns(d.Schema, d.PartitionColumns)
	if err != nil {
		return err
	}
	if in.StorageDescriptor == nil {
		in.StorageDescriptor = &types.StorageDescriptor{}
	}
	in.StorageDescriptor.Columns = glueColumns(cols, in.StorageDescriptor.Columns)
	in.PartitionKeys = glueColumns(keys, in.PartitionKeys)
	return nil
}

func glueColumns(cols []Column, stored []types.Column) []types.Column {
	out := make([]types.Column, 0, len(cols))
	for _, c := range cols {
		g := types.Column{Name: aws.String(c.Name), Type: aws.String(c.Type)}
		if c.Comment != "" {
			g.Comment = aws.String(c.Comment)
		}
		for _, s := range stored {
			if strings.EqualFold(aws.ToString(s.Name), c.Name) {
				g.Parameters = s.Parameters
				break
			}
		}
		out = append(out, g)
	}
	return out
}

// Registration formats: the crawler's native Delta tables carry
// SequenceFile formats and LazySimpleSerDe (as Spark's), so a Hive-type
// reader that does not know Delta fails rather than read every Parquet
// file under the location, removed ones included; readers that know Delta
// read the log.
const (
	inputFormat  = "org.apache.hadoop.mapred.SequenceFileInputFormat"
	outputFormat = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
	serdeLibrary = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
)

// NewTableInput is the record deltasync registers for the Delta table at
// d.Location, in ShapeNative, the one shape Athena, EMR Spark, Trino and
// Lake Formation all read: EXTERNAL_TABLE; EXTERNAL=TRUE,
// spark.sql.sources.provider=delta (Spark, Trino) and table_type=DELTA
// (Athena); the real location in the serde parameter `path` (Spark and
// Trino read only that) and in sd.Location (Athena); real columns and
// partition keys (Lake Formation grants and filters columns, and Athena
// views read them); never-null formats and serde (Glue federation refuses a
// whole database on one table without them); and d's owned parameters.
func NewTableInput(name string, d Desired) (*types.TableInput, error) {
	if d.Location == "" {
		return nil, fmt.Errorf("glue: table %s: no location to register", name)
	}
	t := &types.Table{
		Name:      aws.String(name),
		TableType: aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{
			"EXTERNAL": "TRUE", KeyProvider: ProviderDelta, KeyTableType: TableTypeDelta,
			KeyNumPartCols: "0", // replaced: the registered shape keeps Spark's partition keys
		},
		PartitionKeys: []types.Column{},
		StorageDescriptor: &types.StorageDescriptor{
			Location:     aws.String(d.Location),
			InputFormat:  aws.String(inputFormat),
			OutputFormat: aws.String(outputFormat),
			SerdeInfo: &types.SerDeInfo{
				SerializationLibrary: aws.String(serdeLibrary),
				Parameters:           map[string]string{SerdePath: d.Location, "serialization.format": "1"},
			},
			NumberOfBuckets: -1,
		},
	}
	in, err := apply(t, ShapeNative, d)
	if err != nil {
		return nil, fmt.Errorf("glue: table %s: %w", name, err)
	}
	return in, nil
}
