package glue

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// The record shapes real writers leave in Glue (glue-notes §4), as GetTable
// returns them.

const logSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"comment":"the key"}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"dt","type":"date","nullable":true,"metadata":{}}]}`

func col(name, typ string) types.Column {
	return types.Column{Name: aws.String(name), Type: aws.String(typ)}
}

var created = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// sparkTable: Spark on EMR / Glue jobs through the Glue Hive client
// (delta-io/delta-rs#2062), with the schema Delta's catalog update writes.
func sparkTable() *types.Table {
	return &types.Table{
		Name: aws.String("events"), DatabaseName: aws.String("lake"), CatalogId: aws.String("123456789012"),
		VersionId: aws.String("3"), CreateTime: &created, UpdateTime: &created, CreatedBy: aws.String("arn:aws:iam::123456789012:role/emr"),
		Owner: aws.String("hadoop"), Retention: 0, TableType: aws.String("EXTERNAL_TABLE"), Description: aws.String("set in the console"),
		LastAccessTime: &created,
		Parameters: map[string]string{
			"EXTERNAL": "TRUE", KeyProvider: "delta", "spark.sql.create.version": "3.5.1",
			"spark.sql.partitionProvider": "catalog", KeySchema: logSchema,
			KeyNumPartCols: "1", KeyPartCol + "0": "dt",
			KeyLastUpdateVersion: "2", KeyLastCommitTimestamp: "1700000000000",
			"delta.appendOnly": "true", "owner_team": "data",
		},
		PartitionKeys: []types.Column{},
		StorageDescriptor: &types.StorageDescriptor{
			Columns:      []types.Column{{Name: aws.String("col"), Type: aws.String("array<string>"), Comment: aws.String("from deserializer")}},
			Location:     aws.String("s3://lake/events-__PLACEHOLDER__"),
			InputFormat:  aws.String("org.apache.hadoop.mapred.SequenceFileInputFormat"),
			OutputFormat: aws.String("org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"),
			SerdeInfo: &types.SerDeInfo{
				SerializationLibrary: aws.String("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
				Parameters:           map[string]string{"serialization.format": "1", SerdePath: "s3://lake/events"},
			},
			NumberOfBuckets: -1, BucketColumns: []string{}, SortColumns: []types.Order{},
			Parameters: map[string]string{}, AdditionalLocations: []string{"s3://lake/events-extra"},
			SkewedInfo: &types.SkewedInfo{SkewedColumnNames: []string{}},
		},
	}
}

// athenaTable: Athena's CREATE … TBLPROPERTIES ('table_type'='DELTA'):
// real columns and partition keys synchronised once, at create.
func athenaTable() *types.Table {
	return &types.Table{
		Name: aws.String("clicks"), DatabaseName: aws.String("lake"), VersionId: aws.String("1"), CreateTime: &created,
		TableType: aws.String("EXTERNAL_TABLE"), Owner: aws.String("athena"),
		Parameters:    map[string]string{KeyTableType: "DELTA", "EXTERNAL": "TRUE"},
		PartitionKeys: []types.Column{{Name: aws.String("dt"), Type: aws.String("date"), Parameters: map[string]string{"lf.tag": "p"}}},
		StorageDescriptor: &types.StorageDescriptor{
			Columns: []types.Column{
				{Name: aws.String("id"), Type: aws.String("bigint"), Parameters: map[string]string{"lf.tag": "pii"}},
				col("name", "string"),
			},
			Location:     aws.String("s3://lake/clicks"),
			InputFormat:  aws.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"),
			OutputFormat: aws.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
			SerdeInfo:    &types.SerDeInfo{SerializationLibrary: aws.String("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")},
		},
	}
}

// crawlerTable: a crawler's native Delta table (CreateNativeDeltaTable):
// real columns and the split schema form, classification=delta.
func crawlerTable() *types.Table {
	return &types.Table{
		Name: aws.String("orders"), DatabaseName: aws.String("lake"), VersionId: aws.String("12"),
		TableType: aws.String("EXTERNAL_TABLE"), Owner: aws.String("owner"), Retention: 0,
		Parameters: map[string]string{
			"EXTERNAL": "true", KeyClassification: "delta", KeyTableType: "delta", KeyProvider: "delta",
			"spark.sql.partitionProvider": "catalog", KeySchemaNumParts: "1", KeySchemaPart + "0": logSchema,
			"CrawlerSchemaSerializerVersion": "1.0", "CrawlerSchemaDeserializerVersion": "1.0",
			KeyLastUpdateVersion: "4", KeyLastCommitTimestamp: "1700000000004", "UPDATED_BY_CRAWLER": "c1",
		},
		PartitionKeys: []types.Column{col("dt", "date")},
		StorageDescriptor: &types.StorageDescriptor{
			Columns:      []types.Column{{Name: aws.String("id"), Type: aws.String("bigint"), Comment: aws.String("the key")}, col("name", "string")},
			Location:     aws.String("s3://lake/orders"),
			InputFormat:  aws.String("org.apache.hadoop.mapred.SequenceFileInputFormat"),
			OutputFormat: aws.String("org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"),
			SerdeInfo: &types.SerDeInfo{
				SerializationLibrary: aws.String("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
				Parameters:           map[string]string{SerdePath: "s3://lake/orders"},
			},
		},
	}
}

// trinoTable: Trino's Delta connector with hive.metastore=glue: provider
// DELTA, `col array<varchar>`, and its metadata cache.
func trinoTable() *types.Table {
	return &types.Table{
		Name: aws.String("trips"), DatabaseName: aws.String("lake"), VersionId: aws.String("5"),
		TableType: aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{
			KeyProvider: "DELTA", KeyTrinoVersion: "9", KeyTrinoSchema: logSchema, KeyComment: "trips",
		},
		StorageDescriptor: &types.StorageDescriptor{
			Columns:   []types.Column{col("col", "array<varchar>")},
			Location:  aws.String("s3://lake/trips"),
			SerdeInfo: &types.SerDeInfo{Parameters: map[string]string{SerdePath: "s3://lake/trips"}},
		},
	}
}

func desired() Desired {
	return Desired{
		Schema: logSchema, PartitionColumns: []string{"dt"}, Comment: "from the log",
		Properties: map[string]string{"delta.appendOnly": "false", "delta.minReaderVersion": "1", "delta.minWriterVersion": "2", "quality": "gold"},
		Version:    10, CommitTimestamp: 1700000000010,
	}
}
