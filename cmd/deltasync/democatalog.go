package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
)

// demoCatalog is where the demo registers its tables: an in-memory Unity
// Catalog (the default), or a real one named by --catalog-url, in a catalog
// of the demo's own so that nothing else in it is touched.
type demoCatalog struct {
	client *uc.Client
	url    string
	name   string // the catalog holding the sales and ops schemas
	close  func()
}

// openDemoCatalog starts the in-memory catalog when catalogURL is empty;
// otherwise it creates a fresh catalog deltasync_demo_<random> on that
// server and deletes it on close, unless keep is set.
func openDemoCatalog(ctx context.Context, dir, catalogURL string, keep bool) (*demoCatalog, error) {
	if catalogURL == "" {
		managedRoot := "file://" + filepath.ToSlash(filepath.Join(dir, "managed"))
		srv := uctest.NewServer(uctest.WithManagedStorageRoot(managedRoot))
		srv.AddCatalog("demo")
		srv.AddSchema("demo", "sales")
		srv.AddSchema("demo", "ops")
		client, err := uc.New(srv.URL(), uc.Options{Version: version})
		if err != nil {
			srv.Close()
			return nil, err
		}
		return &demoCatalog{client: client, url: srv.URL(), name: "demo", close: srv.Close}, nil
	}
	client, err := uc.New(catalogURL, uc.Options{Version: version})
	if err != nil {
		return nil, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	name := "deltasync_demo_" + hex.EncodeToString(b[:])
	if _, err := client.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: name, Comment: "created by deltasync demo"}); err != nil {
		return nil, fmt.Errorf("demo: create catalog %s at %s: %w", name, catalogURL, err)
	}
	cat := &demoCatalog{client: client, url: catalogURL, name: name, close: func() {
		if !keep {
			_ = client.DeleteCatalog(context.WithoutCancel(ctx), name, true)
		}
	}}
	for _, schema := range []string{"sales", "ops"} {
		if _, err := client.CreateSchema(ctx, uc.CreateSchemaRequest{Name: schema, CatalogName: name}); err != nil {
			cat.close()
			return nil, fmt.Errorf("demo: create schema %s.%s: %w", name, schema, err)
		}
	}
	return cat, nil
}

// editCatalogRecord sets one property on a table's record through the Delta
// API, as someone editing the catalog by hand would: guarded by the table's
// uuid and etag like every update.
func editCatalogRecord(ctx context.Context, client *uc.Client, name catalog.TableName, key, value string) error {
	rec, err := client.LoadTable(ctx, name)
	if err != nil {
		return err
	}
	_, err = client.UpdateTable(ctx, name, uc.UpdateTableRequest{
		Requirements: []uc.Requirement{
			uc.AssertTableUUID{UUID: rec.Metadata.TableUUID},
			uc.AssertEtag{Etag: rec.Metadata.Etag},
		},
		Updates: []uc.Update{uc.SetProperties{Updates: map[string]string{key: value}}},
	})
	if err != nil {
		return fmt.Errorf("demo: edit the record of %s: %w", name, err)
	}
	return nil
}
