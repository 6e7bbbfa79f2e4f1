package uc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
)

// These tests run the client against the spec-validating in-memory server
// (catalog/uctest): every request we send is checked against the API
// definitions, and NewForTest fails the test on any violation.

func newUC(t *testing.T) (*uctest.Server, *uc.Client) {
	t.Helper()
	srv := spectest.NewForTest(t)
	c, err := uc.New(srv.URL(), uc.Options{
		Version: "test",
		Token:   uc.StaticToken("tok"),
		Retry: uc.RetryPolicy{
			Sleep:  func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Jitter: func(d time.Duration) time.Duration { return d },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

const mappedSchema = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1a","comment":"key"}},
 {"name":"price","type":"decimal(10,2)","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2b"}},
 {"name":"tags","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"timestamp_ntz","containsNull":true},"valueContainsNull":false},"nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3c"}},
 {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"variant","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-5e"}}]},"nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-4d"}}]}`

func registerTable(t *testing.T, c *uc.Client, name catalog.TableName, schemaString string) *uc.LoadTableResponse {
	t.Helper()
	cols, err := catalog.ColumnsFromSchemaString(schemaString)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.CreateTable(context.Background(), name.Catalog, name.Schema, uc.CreateTableRequest{
		Name: name.Table, Location: "file:///data/" + name.Table, TableType: uc.TableTypeExternal,
		Comment: "registered", Columns: cols, PartitionColumns: []string{"id"},
		Protocol: catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "timestampNtz", "variantType"},
			WriterFeatures: []string{"columnMapping", "domainMetadata", "timestampNtz", "variantType"}},
		Properties:            map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "5"},
		LastCommitTimestampMs: 1700000000000,
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return resp
}

func TestUCRegisterLoadUpdate(t *testing.T) {
	srv, c := newUC(t)
	ctx := context.Background()
	if _, err := c.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSchema(ctx, uc.CreateSchemaRequest{Name: "sales", CatalogName: "main"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := c.Config(ctx, "main")
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	if cfg.ProtocolVersion != "1.0" {
		t.Errorf("protocol version %q", cfg.ProtocolVersion)
	}
	name := catalog.TableName{Catalog: "main", Schema: "sales", Table: "orders"}
	created := registerTable(t, c, name, mappedSchema)

	loaded, err := c.LoadTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, loaded); diff != "" {
		t.Errorf("load differs from create response (-create +load):\n%s", diff)
	}
	// Schema survives the server losslessly.
	got, err := loaded.Metadata.Columns.SchemaString()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonAny(t, mappedSchema), jsonAny(t, got)); diff != "" {
		t.Errorf("schema after server round trip (-sent +loaded):\n%s", diff)
	}
	// Protocol comes back from the property projection.
	p, err := catalog.ProtocolFromProperties(loaded.Metadata.Properties)
	if err != nil {
		t.Fatal(err)
	}
	wantP := catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"columnMapping", "timestampNtz", "variantType"},
		WriterFeatures: []string{"columnMapping", "domainMetadata", "timestampNtz", "variantType"}}
	if diff := cmp.Diff(wantP, p); diff != "" {
		t.Errorf("protocol (-want +got):\n%s", diff)
	}
	if len(loaded.Commits) != 0 || loaded.LatestTableVersion != nil {
		t.Errorf("EXTERNAL table has commits/latest-table-version: %+v", loaded)
	}

	// One atomic update with every EXTERNAL action.
	newCols, _ := catalog.ColumnsFromSchemaString(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"day","type":"date","nullable":true,"metadata":{}}]}`)
	req := uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: loaded.Metadata.TableUUID}, uc.AssertEtag{Etag: loaded.Metadata.Etag}},
		Updates: []uc.Update{
			uc.SetColumns{Columns: newCols},
			uc.SetPartitionColumns{Columns: []string{"day"}},
			uc.SetProtocol{Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"clustering", "domainMetadata"}}},
			uc.SetProperties{Updates: map[string]string{"owner.team": "x"}},
			uc.RemoveProperties{Removals: []string{"delta.columnMapping.mode", "delta.columnMapping.maxColumnId"}},
			uc.SetTableComment{Comment: "orders v2"},
			uc.SetDomainMetadata{Clustering: &[][]string{{"id"}}, RowIDHighWaterMark: ptr(int64(41))},
			uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 12, LastCommitTimestampMs: 1700000500000},
		},
	}
	updated, err := c.UpdateTable(ctx, name, req)
	if err != nil {
		t.Fatalf("UpdateTable: %v", err)
	}
	m := updated.Metadata
	if m.Etag == loaded.Metadata.Etag {
		t.Error("etag did not change")
	}
	if diff := cmp.Diff(newCols, m.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"day"}, m.PartitionColumns); diff != "" {
		t.Error(diff)
	}
	if m.LastCommitVersion == nil || *m.LastCommitVersion != 12 {
		t.Errorf("last-commit-version = %v", m.LastCommitVersion)
	}
	dm, err := catalog.DomainMetadataFromProperties(m.Properties)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(catalog.DomainMetadata{Clustering: &[][]string{{"id"}}, RowIDHighWaterMark: ptr(int64(41))}, dm); diff != "" {
		t.Errorf("domain metadata (-want +got):\n%s", diff)
	}
	p, _ = catalog.ProtocolFromProperties(m.Properties)
	if diff := cmp.Diff(catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"clustering", "domainMetadata"}}, p); diff != "" {
		t.Errorf("protocol after set-protocol (-want +got):\n%s", diff)
	}
	if _, ok := m.Properties["delta.columnMapping.mode"]; ok || m.Properties["owner.team"] != "x" {
		t.Errorf("properties = %v", m.Properties)
	}
	info, err := c.GetTable(ctx, name.String())
	if err != nil {
		t.Fatal(err)
	}
	if info.Comment != "orders v2" || info.TableID != m.TableUUID || info.DataSourceFormat != "DELTA" {
		t.Errorf("GetTable = %+v", info)
	}
	if cols, err := uc.ColumnsFromTypeJSON(info.Columns); err != nil || !cmp.Equal(newCols, cols) {
		t.Errorf("classic columns = %+v, %v", cols, err)
	}
	_ = srv
}

func TestUCConflictsAndRetries(t *testing.T) {
	srv, c := newUC(t)
	ctx := context.Background()
	srv.AddSchema("main", "s")
	name := catalog.TableName{Catalog: "main", Schema: "s", Table: "t"}
	loaded := registerTable(t, c, name, mappedSchema).Metadata
	update := func(uuid, etag string) error {
		_, err := c.UpdateTable(ctx, name, uc.UpdateTableRequest{
			Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: uuid}, uc.AssertEtag{Etag: etag}},
			Updates:      []uc.Update{uc.SetTableComment{Comment: "c"}},
		})
		return err
	}

	// A concurrent writer makes our etag stale: 409, not retried.
	srv.BeforeUpdate(func(string) {
		if err := srv.MutateTable(name.String(), func(tb *uctest.Table) { tb.Properties["other"] = "writer" }); err != nil {
			t.Error(err)
		}
	})
	srv.ResetRequests()
	if err := update(loaded.TableUUID, loaded.Etag); !uc.IsConflict(err) || uc.Retryable(err) {
		t.Fatalf("stale etag: err = %v", err)
	}
	if n := countUpdates(srv); n != 1 {
		t.Errorf("409 was sent %d times", n)
	}
	srv.BeforeUpdate(nil)

	// Wrong uuid: 409 conflict as well.
	fresh, _ := c.LoadTable(ctx, name)
	if err := update("00000000-0000-0000-0000-000000000000", fresh.Metadata.Etag); !uc.IsConflict(err) {
		t.Fatalf("wrong uuid: err = %v", err)
	}

	// Two 503s, then success: resent identically.
	srv.ResetRequests()
	srv.FailNext(2, http.StatusServiceUnavailable)
	if err := update(fresh.Metadata.TableUUID, fresh.Metadata.Etag); err != nil {
		t.Fatalf("after 503s: %v", err)
	}
	var bodies []string
	for _, r := range srv.Requests() {
		bodies = append(bodies, string(r.Body))
	}
	if len(bodies) != 3 || bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Errorf("retries not identical: %q", bodies)
	}

	// Missing table, HEAD, unknown catalog in config.
	if _, err := c.LoadTable(ctx, catalog.TableName{Catalog: "main", Schema: "s", Table: "nope"}); !uc.IsNotFound(err) {
		t.Errorf("missing table: %v", err)
	}
	if ok, err := c.TableExists(ctx, name); !ok || err != nil {
		t.Errorf("TableExists = %v, %v", ok, err)
	}
	if ok, err := c.TableExists(ctx, catalog.TableName{Catalog: "main", Schema: "s", Table: "nope"}); ok || err != nil {
		t.Errorf("TableExists(missing) = %v, %v", ok, err)
	}
	if _, err := c.Config(ctx, "nosuch"); !uc.IsNotFound(err) {
		t.Errorf("Config(unknown catalog) = %v", err)
	}
}

func countUpdates(srv *uctest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && strings.Contains(r.Path, "/delta/v1/") && strings.HasSuffix(r.Path, "/t") {
			n++
		}
	}
	return n
}

func TestUCListingCredentialsDelete(t *testing.T) {
	srv, c := newUC(t)
	ctx := context.Background()
	srv.AddSchema("main", "s")
	srv.AddSchema("dev", "x")
	const n = 120 // more than one server page (100) and than our max_results (50)
	for i := range n {
		registerTable(t, c, catalog.TableName{Catalog: "main", Schema: "s", Table: fmt.Sprintf("t%03d", i)}, mappedSchema)
	}
	tables, err := c.ListTables(ctx, "main", "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != n {
		t.Fatalf("ListTables = %d tables, want %d", len(tables), n)
	}
	cats, err := c.ListCatalogs(ctx)
	if err != nil || len(cats) != 2 {
		t.Fatalf("ListCatalogs = %v, %v", cats, err)
	}
	schemas, err := c.ListSchemas(ctx, "main")
	if err != nil || len(schemas) != 1 || schemas[0].Name != "s" {
		t.Fatalf("ListSchemas = %v, %v", schemas, err)
	}

	srv.SetCredentialConfig(func(string) map[string]string {
		return map[string]string{"s3.access-key-id": "AK", "s3.secret-access-key": "SK", "s3.session-token": "ST"}
	})
	name := catalog.TableName{Catalog: "main", Schema: "s", Table: "t007"}
	creds, err := c.ReadCredentials(ctx, name, "file:///data/t007")
	if err != nil {
		t.Fatal(err)
	}
	if creds.S3AccessKeyID != "AK" || creds.S3SecretAccessKey != "SK" || creds.S3SessionToken != "ST" {
		t.Errorf("creds = %#v", creds)
	}

	if err := c.DeleteTable(ctx, name.String()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.TableExists(ctx, name); ok {
		t.Error("table still exists after delete")
	}
}

func jsonAny(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// TestUCStagingThenManagedCreate creates a catalog-managed table the way an
// engine does: staging table, then createTable at the staged location with
// the protocol and properties the catalog requires.
func TestUCStagingThenManagedCreate(t *testing.T) {
	srv, c := newUC(t)
	srv.AddCatalog("m")
	srv.AddSchema("m", "s")
	ctx := context.Background()
	st, err := c.CreateStagingTable(ctx, "m", "s", "events")
	if err != nil {
		t.Fatal(err)
	}
	if st.TableType != uc.TableTypeManaged || st.RequiredProtocol.MinReaderVersion != 3 {
		t.Fatalf("staging answer: %+v", st)
	}
	props := map[string]string{}
	for k, v := range st.RequiredProperties {
		if v != nil {
			props[k] = *v
		}
	}
	if props["io.unitycatalog.tableId"] != st.TableID {
		t.Fatalf("required io.unitycatalog.tableId = %q, want the staging id %q", props["io.unitycatalog.tableId"], st.TableID)
	}
	cols, err := catalog.ColumnsFromSchemaString(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.CreateTable(ctx, "m", "s", uc.CreateTableRequest{
		Name: "events", Location: st.Location, TableType: uc.TableTypeManaged, Columns: cols,
		Protocol: st.RequiredProtocol, Properties: props, LastCommitTimestampMs: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Metadata.TableUUID != st.TableID || created.LatestTableVersion == nil || *created.LatestTableVersion != 0 {
		t.Errorf("created: uuid %s (staging %s), latest-table-version %v", created.Metadata.TableUUID, st.TableID, created.LatestTableVersion)
	}
	if _, err := c.CreateStagingTable(ctx, "m", "s", "events"); !uc.IsAlreadyExists(err) {
		t.Errorf("staging a name that is taken: %v, want AlreadyExists", err)
	}
}
