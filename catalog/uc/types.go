package uc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// Table types (TableMetadata.TableType, TableInfo.TableType).
const (
	TableTypeManaged  = "MANAGED"
	TableTypeExternal = "EXTERNAL"
)

// Credential operations for TableCredentials.
const (
	OperationRead      = "READ"
	OperationReadWrite = "READ_WRITE"
)

// ---- classic API (snake_case) ----

// CatalogInfo is the classic API's CatalogInfo.
type CatalogInfo struct { //nolint:revive // named after the API definition's schema, like SchemaInfo and TableInfo beside it
	Name            string            `json:"name"`
	Comment         string            `json:"comment,omitempty"`
	Properties      map[string]string `json:"properties,omitempty"`
	Owner           string            `json:"owner,omitempty"`
	CreatedAt       int64             `json:"created_at,omitempty"`
	CreatedBy       string            `json:"created_by,omitempty"`
	UpdatedAt       int64             `json:"updated_at,omitempty"`
	UpdatedBy       string            `json:"updated_by,omitempty"`
	ID              string            `json:"id,omitempty"`
	StorageRoot     string            `json:"storage_root,omitempty"`
	StorageLocation string            `json:"storage_location,omitempty"`
}

// SchemaInfo is the classic API's SchemaInfo.
type SchemaInfo struct {
	Name            string            `json:"name"`
	CatalogName     string            `json:"catalog_name"`
	Comment         string            `json:"comment,omitempty"`
	Properties      map[string]string `json:"properties,omitempty"`
	FullName        string            `json:"full_name,omitempty"`
	Owner           string            `json:"owner,omitempty"`
	CreatedAt       int64             `json:"created_at,omitempty"`
	CreatedBy       string            `json:"created_by,omitempty"`
	UpdatedAt       int64             `json:"updated_at,omitempty"`
	UpdatedBy       string            `json:"updated_by,omitempty"`
	SchemaID        string            `json:"schema_id,omitempty"`
	StorageRoot     string            `json:"storage_root,omitempty"`
	StorageLocation string            `json:"storage_location,omitempty"`
}

// CreateCatalogRequest is the classic API's CreateCatalog body.
type CreateCatalogRequest struct {
	Name        string            `json:"name"`
	Comment     string            `json:"comment,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	StorageRoot string            `json:"storage_root,omitempty"`
}

// CreateSchemaRequest is the classic API's CreateSchema body.
type CreateSchemaRequest struct {
	Name        string            `json:"name"`
	CatalogName string            `json:"catalog_name"`
	Comment     string            `json:"comment,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	StorageRoot string            `json:"storage_root,omitempty"`
}

// TableInfo is the classic API's TableInfo (GET /tables/{full_name}).
type TableInfo struct {
	Name             string            `json:"name"`
	CatalogName      string            `json:"catalog_name"`
	SchemaName       string            `json:"schema_name"`
	TableType        string            `json:"table_type,omitempty"`
	DataSourceFormat string            `json:"data_source_format,omitempty"`
	Columns          []ColumnInfo      `json:"columns,omitempty"`
	StorageLocation  string            `json:"storage_location,omitempty"`
	Comment          string            `json:"comment,omitempty"`
	Properties       map[string]string `json:"properties,omitempty"`
	Owner            string            `json:"owner,omitempty"`
	CreatedAt        int64             `json:"created_at,omitempty"`
	CreatedBy        string            `json:"created_by,omitempty"`
	UpdatedAt        int64             `json:"updated_at,omitempty"`
	UpdatedBy        string            `json:"updated_by,omitempty"`
	TableID          string            `json:"table_id,omitempty"`
	ViewDefinition   string            `json:"view_definition,omitempty"`
}

// FullName returns the table's catalog.TableName.
func (t *TableInfo) FullName() catalog.TableName {
	return catalog.TableName{Catalog: t.CatalogName, Schema: t.SchemaName, Table: t.Name}
}

// ColumnInfo is the classic API's ColumnInfo. TypeJSON (a Spark StructField
// JSON in camelCase) is the authoritative type; see ColumnsFromTypeJSON.
type ColumnInfo struct {
	Name             string `json:"name"`
	TypeText         string `json:"type_text,omitempty"`
	TypeJSON         string `json:"type_json,omitempty"`
	TypeName         string `json:"type_name,omitempty"`
	TypePrecision    *int32 `json:"type_precision,omitempty"`
	TypeScale        *int32 `json:"type_scale,omitempty"`
	TypeIntervalType string `json:"type_interval_type,omitempty"`
	Position         *int32 `json:"position,omitempty"`
	Comment          string `json:"comment,omitempty"`
	Nullable         *bool  `json:"nullable,omitempty"`
	PartitionIndex   *int32 `json:"partition_index,omitempty"`
}

// ---- Delta API (kebab-case) ----

// DeltaConfig is the Delta API's DeltaCatalogConfig (GET /delta/v1/config).
type DeltaConfig struct {
	Endpoints       []string `json:"endpoints"`
	ProtocolVersion string   `json:"protocol-version"`
}

// Supports reports whether the server advertises the endpoint "METHOD /v1/…",
// e.g. Supports("POST", "/v1/catalogs/{catalog}/schemas/{schema}/tables/{table}").
func (c *DeltaConfig) Supports(method, path string) bool {
	want := strings.ToUpper(method) + " " + path
	for _, e := range c.Endpoints {
		if strings.EqualFold(strings.Join(strings.Fields(e), " "), want) {
			return true
		}
	}
	return false
}

// LoadTableResponse is the Delta API's DeltaLoadTableResponse (loadTable,
// createTable and updateTable all answer with it).
type LoadTableResponse struct {
	Metadata TableMetadata `json:"metadata"`
	// Commits are the ratified, unbackfilled commits of a MANAGED table,
	// newest first. Absent (nil) for EXTERNAL tables.
	Commits []Commit `json:"commits,omitempty"`
	// Uniform is the UniForm (Iceberg) metadata, kept verbatim.
	Uniform json.RawMessage `json:"uniform,omitempty"`
	// LatestTableVersion is the newest ratified version (MANAGED only).
	LatestTableVersion *int64 `json:"latest-table-version,omitempty"`
}

// TableMetadata is the Delta API's DeltaTableMetadata. It carries no name,
// comment or structured protocol: see GetTable and catalog.ProtocolFromProperties.
type TableMetadata struct {
	Etag             string             `json:"etag"`
	TableType        string             `json:"table-type"`
	TableUUID        string             `json:"table-uuid"`
	Location         string             `json:"location"`
	CreatedTime      int64              `json:"created-time"`
	UpdatedTime      int64              `json:"updated-time"`
	Columns          catalog.StructType `json:"columns"`
	PartitionColumns []string           `json:"partition-columns,omitempty"`
	Properties       map[string]string  `json:"properties"`
	// LastCommitVersion tracks the last metadata-changing commit (delta.lastUpdateVersion).
	LastCommitVersion *int64 `json:"last-commit-version,omitempty"`
	// LastCommitTimestampMs is delta.lastCommitTimestamp.
	LastCommitTimestampMs *int64 `json:"last-commit-timestamp-ms,omitempty"`
}

// CatalogManaged reports whether the table is catalog-managed, i.e. its
// properties carry delta.feature.catalogManaged=supported.
func (m *TableMetadata) CatalogManaged() bool {
	return m.Properties["delta.feature.catalogManaged"] == "supported"
}

// Commit is the Delta API's DeltaCommit (a ratified catalog-managed commit).
type Commit struct {
	Version                   int64  `json:"version"`
	Timestamp                 int64  `json:"timestamp"`
	FileName                  string `json:"file-name"`
	FileSize                  int64  `json:"file-size"`
	FileModificationTimestamp int64  `json:"file-modification-timestamp"`
}

// CreateTableRequest is the Delta API's DeltaCreateTableRequest. deltasync
// uses it for EXTERNAL registration: Location is the table root and
// LastCommitTimestampMs the timestamp of the log's version 0.
type CreateTableRequest struct {
	Name                  string                  `json:"name"`
	Location              string                  `json:"location"`
	TableType             string                  `json:"table-type"`
	Comment               string                  `json:"comment,omitempty"`
	Columns               catalog.StructType      `json:"columns"`
	PartitionColumns      []string                `json:"partition-columns,omitempty"`
	Protocol              catalog.Protocol        `json:"protocol"`
	Properties            map[string]string       `json:"properties"`
	DomainMetadata        *catalog.DomainMetadata `json:"domain-metadata,omitempty"`
	LastCommitTimestampMs int64                   `json:"last-commit-timestamp-ms"`
	Uniform               json.RawMessage         `json:"uniform,omitempty"`
}

// MarshalJSON writes properties as {} when nil (the field is required).
func (r CreateTableRequest) MarshalJSON() ([]byte, error) {
	type plain CreateTableRequest
	if r.Properties == nil {
		r.Properties = map[string]string{}
	}
	return json.Marshal(plain(r))
}

// CredentialsResponse is the Delta API's DeltaCredentialsResponse.
type CredentialsResponse struct {
	StorageCredentials []StorageCredential `json:"storage-credentials"`
}

// StorageCredential is one vended credential. Config holds cloud-specific
// keys (see the Config* constants); only the relevant cloud's keys are set.
type StorageCredential struct {
	Prefix           string            `json:"prefix"`
	Operation        string            `json:"operation"`
	ExpirationTimeMs int64             `json:"expiration-time-ms"`
	Config           map[string]string `json:"config"`
}

// Keys of StorageCredential.Config.
const (
	ConfigS3AccessKeyID     = "s3.access-key-id"
	ConfigS3SecretAccessKey = "s3.secret-access-key"
	ConfigS3SessionToken    = "s3.session-token"
	ConfigAzureSASToken     = "azure.sas-token"
	ConfigGCSOAuthToken     = "gcs.oauth-token"
)

// String redacts the secrets.
func (c StorageCredential) String() string {
	return fmt.Sprintf("StorageCredential{Prefix:%q Operation:%s ExpirationTimeMs:%d Config:[REDACTED]}",
		c.Prefix, c.Operation, c.ExpirationTimeMs)
}
