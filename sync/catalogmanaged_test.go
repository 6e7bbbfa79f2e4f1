package sync_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
)

// registerPlainExternal records the log at dir as a plain EXTERNAL table:
// its schema and properties, but protocol 1/2 without catalogManaged (as a
// tool that does not know the feature registers it), watermark version 0.
func (e *env) registerPlainExternal(t *testing.T, dir, table string) {
	t.Helper()
	s := snapshot(t, dir)
	cols, err := catalog.ColumnsFromSchemaString(s.Metadata.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CreateTable(context.Background(), e.catalog, e.schema, uc.CreateTableRequest{
		Name: table, Location: "file://" + dir, TableType: uc.TableTypeExternal, Columns: cols,
		Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, LastCommitTimestampMs: 1712091396253,
	}); err != nil {
		t.Fatalf("register %s: %v", table, err)
	}
}

// A plain EXTERNAL record over a catalog-managed log (the corpus's
// basic_catalog_managed, published v1 with staged v2 and v3; and
// catalog_managed_0, published v0 with staged v1 and v2) is flagged and
// never written: before, deltasync sent set-protocol, set-properties and
// the watermark from the published version, ignoring the staged commits.
// Against the real server when DELTASYNC_UC_URL is set.
func TestExternalRecordOverCatalogManagedLogIsFlagged(t *testing.T) {
	e := newEnv(t)
	for _, src := range []string{"basic_catalog_managed", "catalog_managed_0"} {
		t.Run(src, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), src)
			copyLog(t, src, dir, -1)
			e.registerPlainExternal(t, dir, src)
			before := e.record(src)
			res := e.reconciler(only(e, src)).Sync(context.Background()).Results
			if len(res) != 1 {
				t.Fatalf("results %+v", res)
			}
			r := res[0]
			if r.Outcome != sync.OutcomeFlagged || r.Status != sync.StatusUnknown || r.ErrorReason != sync.ReasonUnsupported ||
				!strings.Contains(r.Reason, "catalog-managed (catalogManaged)") || !strings.Contains(r.Reason, "EXTERNAL, not MANAGED") {
				t.Errorf("outcome %s, status %s, error_reason %s, reason %q", r.Outcome, r.Status, r.ErrorReason, r.Reason)
			}
			if len(r.Actions) != 0 || r.Plan == nil {
				t.Errorf("actions %v, plan %v: want nothing sent and the drift shown", r.Actions, r.Plan)
			}
			after := e.record(src)
			if after.Etag != before.Etag || after.Properties["delta.feature.catalogManaged"] != "" {
				t.Errorf("the record was written: etag %s -> %s, properties %v", before.Etag, after.Etag, after.Properties)
			}
		})
	}
}

// The preview name catalogOwned-preview flags the same way.
func TestExternalRecordOverCatalogOwnedPreviewLogIsFlagged(t *testing.T) {
	e := uctestEnv(t)
	dir := filepath.Join(t.TempDir(), "t")
	copyLog(t, "basic_catalog_managed", dir, 0)
	writeCommit(t, dir, 1, map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
		"readerFeatures": []string{"catalogOwned-preview"}, "writerFeatures": []string{"catalogOwned-preview", "inCommitTimestamp"}}})
	e.registerPlainExternal(t, dir, "t")
	e.srv.ResetRequests()
	res := e.reconciler(only(e, "t")).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeFlagged || !strings.Contains(res[0].Reason, "catalog-managed (catalogOwned-preview)") || e.updates() != 0 {
		t.Fatalf("results %+v, %d updates", res, e.updates())
	}
}

// A plain EXTERNAL record whose watermark is ahead of the published
// catalog-managed log (the usual case: the managing catalog ratified
// commits the log has not published) is flagged as catalog-managed, not
// failed as a log behind its watermark and retried on the failure
// backoff.
func TestExternalRecordAheadOfCatalogManagedLogIsFlagged(t *testing.T) {
	e := newEnv(t)
	const src = "basic_catalog_managed" // published v1
	dir := filepath.Join(t.TempDir(), src)
	copyLog(t, src, dir, -1)
	e.registerPlainExternal(t, dir, src)
	md := e.record(src)
	if _, err := e.client.UpdateTable(context.Background(), e.name(src), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: md.ID}, uc.AssertEtag{Etag: md.Etag}},
		Updates:      []uc.Update{uc.UpdateMetadataSnapshotVersion{LastCommitVersion: 3, LastCommitTimestampMs: 1900000000000}},
	}); err != nil {
		t.Fatal(err)
	}
	before := e.record(src)
	res := e.reconciler(only(e, src)).Sync(context.Background()).Results
	if len(res) != 1 || res[0].Outcome != sync.OutcomeFlagged || res[0].ErrorReason != sync.ReasonUnsupported ||
		!strings.Contains(res[0].Reason, "catalog-managed (catalogManaged)") {
		t.Fatalf("results %+v: want flagged as catalog-managed", res)
	}
	if after := e.record(src); after.Etag != before.Etag {
		t.Errorf("the record was written: etag %s -> %s", before.Etag, after.Etag)
	}
}
