package sync

import (
	"context"
	"fmt"
	"strings"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
)

// RegistrationFor builds the createTable request that registers the
// snapshot's table in Unity Catalog as an EXTERNAL table at location,
// carrying exactly what the log says (columns, partitioning, protocol,
// configuration, clustering, description). The demo and the e2e tests use
// it; deltasync itself never creates tables.
func RegistrationFor(s *deltalog.Snapshot, name catalog.TableName, location string) (uc.CreateTableRequest, error) {
	return registrationFor(s, name, location, true)
}

// registrationFor is RegistrationFor; ucTypes checks the columns against
// Unity Catalog's type limits (a Hive Metastore stores the log's schema
// as its own JSON text: it has none).
func registrationFor(s *deltalog.Snapshot, name catalog.TableName, location string, ucTypes bool) (uc.CreateTableRequest, error) {
	cols, err := catalog.ColumnsFromSchemaString(s.Metadata.SchemaString)
	if err != nil {
		return uc.CreateTableRequest{}, fmt.Errorf("registering %s: %w", name, err)
	}
	if bad := catalog.UnsupportedTypes(cols); ucTypes && len(bad) > 0 {
		return uc.CreateTableRequest{}, fmt.Errorf("registering %s: types the catalog cannot store: %s",
			name, strings.Join(bad, ", "))
	}
	log := LogStateOf(s, location)
	if strings.Contains(strings.ToLower(log.Configuration["delta.universalFormat.enabledFormats"]), "iceberg") {
		return uc.CreateTableRequest{}, fmt.Errorf("registering %s: UniForm Iceberg tables need uniform metadata, not supported", name)
	}
	props := map[string]string{}
	for k, v := range log.Configuration {
		if !catalog.IsDerivedProperty(k) {
			props[k] = v
		}
	}
	req := uc.CreateTableRequest{
		Name:                  name.Table,
		Location:              location,
		TableType:             uc.TableTypeExternal,
		Comment:               s.Metadata.Description,
		Columns:               cols,
		PartitionColumns:      nonNil(s.Metadata.PartitionColumns),
		Protocol:              log.Protocol,
		Properties:            props,
		LastCommitTimestampMs: max(s.CommitTimestamp, 1),
	}
	if log.Clustering != nil {
		c := log.Clustering
		req.DomainMetadata = &catalog.DomainMetadata{Clustering: &c}
	}
	return req, nil
}

// Register creates the EXTERNAL table for the snapshot and records the
// snapshot's version as the catalog's watermark (the server stamps 0 at
// create), so that the new record is in sync with the log.
func Register(ctx context.Context, c *uc.Client, s *deltalog.Snapshot, name catalog.TableName, location string) (*uc.LoadTableResponse, error) {
	req, err := RegistrationFor(s, name, location)
	if err != nil {
		return nil, err
	}
	created, err := c.CreateTable(ctx, name.Catalog, name.Schema, req)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	up := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: created.Metadata.TableUUID}},
		Updates: []uc.Update{uc.UpdateMetadataSnapshotVersion{
			LastCommitVersion: s.Version, LastCommitTimestampMs: s.CommitTimestamp}},
	}
	out, err := c.UpdateTable(ctx, name, up)
	if err != nil {
		return nil, fmt.Errorf("registering %s: recording version %d: %w", name, s.Version, err)
	}
	return out, nil
}

// nonNil returns s, or an empty slice for nil (the catalog wants [] for
// no partition columns).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
