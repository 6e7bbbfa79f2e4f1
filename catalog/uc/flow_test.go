package uc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/internal/testenv"
)

// runClientFlow drives the client through what deltasync does against any
// spec-faithful server: register, load, compare, update under assert-etag,
// lose a race, list, delete. It needs no test-server knobs, so it runs
// against uctest and against a real Unity Catalog server alike.
func runClientFlow(t *testing.T, c *uc.Client) {
	ctx := context.Background()
	cat := fmt.Sprintf("dsclient_%d", time.Now().UnixNano())
	if _, err := c.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: cat, Comment: "deltasync catalog client test"}); err != nil {
		t.Fatalf("CreateCatalog: %v", err)
	}
	t.Cleanup(func() {
		if err := c.DeleteCatalog(context.Background(), cat, true); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	if _, err := c.CreateSchema(ctx, uc.CreateSchemaRequest{Name: "s", CatalogName: cat}); err != nil {
		t.Fatalf("CreateSchema: %v", err)
	}
	if _, err := c.Config(ctx, cat); err != nil {
		t.Fatalf("Config: %v", err)
	}
	name := catalog.TableName{Catalog: cat, Schema: "s", Table: "orders"}
	cols, err := catalog.ColumnsFromSchemaString(mappedSchema)
	if err != nil {
		t.Fatal(err)
	}
	proto := catalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"columnMapping", "timestampNtz"},
		WriterFeatures: []string{"columnMapping", "domainMetadata", "timestampNtz"}}
	created, err := c.CreateTable(ctx, cat, "s", uc.CreateTableRequest{
		Name: name.Table, Location: "file://" + t.TempDir() + "/orders", TableType: uc.TableTypeExternal,
		Comment: "registered", Columns: cols, PartitionColumns: []string{"id"}, Protocol: proto,
		Properties:            map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "5"},
		LastCommitTimestampMs: 1700000000000,
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	loaded, err := c.LoadTable(ctx, name)
	if err != nil {
		t.Fatalf("LoadTable: %v", err)
	}
	if diff := cmp.Diff(created.Metadata, loaded.Metadata); diff != "" {
		t.Errorf("load differs from create (-create +load):\n%s", diff)
	}
	if diff := cmp.Diff(cols, loaded.Metadata.Columns); diff != "" {
		t.Errorf("columns changed on the server (-sent +loaded):\n%s", diff)
	}
	if got, err := catalog.ProtocolFromProperties(loaded.Metadata.Properties); err != nil || !cmp.Equal(proto, got) {
		t.Errorf("protocol from properties = %+v, %v; want %+v", got, err, proto)
	}
	if diff := cmp.Diff([]string{"id"}, loaded.Metadata.PartitionColumns); diff != "" {
		t.Errorf("partition columns: %s", diff)
	}
	info, err := c.GetTable(ctx, name.String())
	if err != nil {
		t.Fatalf("GetTable: %v", err)
	}
	if info.Comment != "registered" || info.TableID != loaded.Metadata.TableUUID {
		t.Errorf("GetTable = comment %q id %q", info.Comment, info.TableID)
	}

	m := loaded.Metadata
	update := func(uuid, etag string, u uc.Update) (*uc.LoadTableResponse, error) {
		return c.UpdateTable(ctx, name, uc.UpdateTableRequest{
			Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: uuid}, uc.AssertEtag{Etag: etag}},
			Updates:      []uc.Update{u, uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 3, LastCommitTimestampMs: 1700000300000}},
		})
	}
	up, err := update(m.TableUUID, m.Etag, uc.SetProperties{Updates: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatalf("UpdateTable: %v", err)
	}
	if up.Metadata.Properties["team"] != "a" || up.Metadata.LastCommitVersion == nil || *up.Metadata.LastCommitVersion != 3 {
		t.Errorf("after update: %+v", up.Metadata)
	}
	if up.Metadata.Etag == m.Etag {
		// The real server derives the etag from updated_at in milliseconds:
		// two changes within one millisecond share it (uc-delta-api.md §4.4).
		t.Logf("etag unchanged by an update within the same millisecond; skipping the stale-etag check")
	} else if _, err := update(m.TableUUID, m.Etag, uc.SetProperties{Updates: map[string]string{"team": "b"}}); !uc.IsConflict(err) {
		t.Errorf("stale etag: err = %v, want a conflict", err)
	}
	if _, err := update("00000000-0000-0000-0000-000000000000", up.Metadata.Etag, uc.SetTableComment{Comment: "x"}); !uc.IsConflict(err) {
		t.Errorf("wrong uuid: err = %v, want a conflict", err)
	}

	tables, err := c.ListTables(ctx, cat, "s")
	if err != nil || len(tables) != 1 || tables[0].Name != "orders" {
		t.Errorf("ListTables = %+v, %v", tables, err)
	}
	schemas, err := c.ListSchemas(ctx, cat)
	if err != nil || !slices.ContainsFunc(schemas, func(s uc.SchemaInfo) bool { return s.Name == "s" }) {
		t.Errorf("ListSchemas = %+v, %v", schemas, err)
	}
	cats, err := c.ListCatalogs(ctx)
	if err != nil || !slices.ContainsFunc(cats, func(ci uc.CatalogInfo) bool { return ci.Name == cat }) {
		t.Errorf("ListCatalogs misses %s: %v", cat, err)
	}
	missing := catalog.TableName{Catalog: cat, Schema: "s", Table: "missing"}
	if _, err := c.LoadTable(ctx, missing); !uc.IsNotFound(err) {
		t.Errorf("LoadTable(missing) = %v", err)
	}
	if ok, err := c.TableExists(ctx, name); !ok || err != nil {
		t.Errorf("TableExists = %v, %v", ok, err)
	}
	if err := c.DeleteTable(ctx, name.String()); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	if ok, err := c.TableExists(ctx, name); ok || err != nil {
		t.Errorf("TableExists after delete = %v, %v", ok, err)
	}
}

func TestClientFlowUCTest(t *testing.T) {
	srv := spectest.NewForTest(t)
	c, err := uc.New(srv.URL(), uc.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	runClientFlow(t, c)
}

// TestClientFlowRealServer runs the same flow against the real Unity Catalog
// server that .ci/setup-uc.sh starts (DELTASYNC_UC_URL).
func TestClientFlowRealServer(t *testing.T) {
	// The real server is not published on Maven Central, so CI cannot
	// install it: DELTASYNC_REQUIRE_UC (not _EXTERNAL) makes it mandatory.
	url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC,
		"DELTASYNC_UC_URL not set: no real Unity Catalog server (see .ci/setup-uc.sh)")
	var opts uc.Options
	opts.Version = "test"
	if tok := os.Getenv("DELTASYNC_UC_TOKEN"); tok != "" {
		opts.Token = uc.StaticToken(tok)
	}
	c, err := uc.New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListCatalogs(context.Background()); err != nil {
		var ae *uc.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("server at %s does not answer: %v", url, err)
		}
	}
	runClientFlow(t, c)
}
