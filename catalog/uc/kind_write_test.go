package uc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest"
)

// refusalOf is what catalog.AsRefusal finds in err.
func refusalOf(err error) (catalog.Refusal, bool) {
	var r interface{ CatalogRefusal() catalog.Refusal }
	if !errors.As(err, &r) {
		return catalog.Refusal{}, false
	}
	return r.CatalogRefusal(), true
}

// prepare loads name and prepares edit for it, at log version edit.Version.
func prepare(t *testing.T, k *uc.Kind, name catalog.TableName, edit *catalog.Edit) (*catalog.Read, *catalog.Write) {
	t.Helper()
	read, err := k.Load(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.Prepare(read, catalog.LogState{Version: edit.Version}, edit)
	if err != nil {
		t.Fatal(err)
	}
	return read, w
}

// A Write is the request alone ({"updates":[...]}, no guard): what a saved
// plan keeps and apply sends in another process. Sent from the Write alone
// (as decoded from JSON), it wins with the etag it left; sent again, its
// etag is stale and it loses with catalog.ErrConflict.
func TestKindPrepareSend(t *testing.T) {
	e := newKindEnv(t)
	ctx := context.Background()
	registerTable(t, e.c, tn("t"), mappedSchema)
	edit := &catalog.Edit{SetProperties: map[string]string{"owner.team": "data"}, Version: 5, CommitTimestampMs: 1700000001000}
	read, w := prepare(t, e.k, tn("t"), edit)
	if w.Kind != "unity-catalog" || w.Table != tn("t") || w.TableID != read.ID || w.Etag != read.Etag || w.Edit != edit ||
		w.LogVersion != 5 || !slices.Equal(w.Actions, []string{"set-properties", "update-metadata-snapshot-version"}) {
		t.Errorf("write %+v", w)
	}
	const want = `{"updates":[{"action":"set-properties","updates":{"owner.team":"data"}},` +
		`{"action":"update-metadata-snapshot-version","last-commit-version":5,"last-commit-timestamp-ms":1700000001000}]}`
	if string(w.Request) != want {
		t.Errorf("request\n%s\nwant\n%s", w.Request, want)
	}
	if rf := e.k.Preflight(w); rf != nil {
		t.Errorf("preflight %+v", rf)
	}

	saved, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var apply catalog.Write
	if err := json.Unmarshal(saved, &apply); err != nil {
		t.Fatal(err)
	}
	apply.Table = tn("t") // a saved plan keeps the name beside the write
	sent, err := e.k.Send(ctx, &apply)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := e.srv.Table("main.s.t")
	if !sent.Own || sent.Etag == "" || sent.Etag != after.Etag || after.Properties["owner.team"] != "data" ||
		after.Properties["delta.lastUpdateVersion"] != "5" {
		t.Errorf("sent %+v; the record: etag %s, properties %v", sent, after.Etag, after.Properties)
	}

	_, err = e.k.Send(ctx, w)
	if !errors.Is(err, catalog.ErrConflict) || errors.Is(err, catalog.ErrRefused) || errors.Is(err, catalog.ErrOutcomeUnknown) {
		t.Errorf("stale etag: %v", err)
	}
	if _, ok := refusalOf(err); ok {
		t.Errorf("a conflict carries a refusal: %v", err)
	}
	other := *w
	other.Kind = "hive-metastore"
	if _, err := e.k.Send(ctx, &other); err == nil || !strings.Contains(err.Error(), `a "hive-metastore" write`) {
		t.Errorf("another kind's write: %v", err)
	}
}

// A write resent after an attempt the server may have acted on, then
// answered 409, is a conflict whose outcome is unknown: it answers
// catalog.ErrOutcomeUnknown (sync then reads the record again). Before,
// only uc.ErrOutcomeUnknown answered, which a kind's caller does not know.
func TestKindSendResentConflictIsOutcomeUnknown(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"message":"first","type":"X","code":503}}`)
			return
		}
		w.WriteHeader(409)
		fmt.Fprint(w, `{"error":{"message":"assert-etag failed","type":"UpdateRequirementConflictException","code":409}}`)
	}))
	defer srv.Close()
	c, err := uc.New(srv.URL+"/api/2.1/unity-catalog", uc.Options{
		Retry: uc.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	k := uc.NewKind(c, uc.KindOptions{})
	w, err := k.Prepare(&catalog.Read{Record: catalog.Record{Name: tn("t"), ID: "u", Etag: "e"}}, catalog.LogState{Version: 1},
		&catalog.Edit{Version: 1, CommitTimestampMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Send(context.Background(), w)
	if !errors.Is(err, catalog.ErrOutcomeUnknown) || !errors.Is(err, catalog.ErrConflict) {
		t.Errorf("resent 409: %v; want ErrOutcomeUnknown and ErrConflict", err)
	}
}

// Preflight is the client's width check: a value Unity Catalog cannot
// store is a pre-flight refusal naming the action; Send refuses it too,
// without sending it.
func TestKindPreflight(t *testing.T) {
	e := newKindEnv(t)
	registerTable(t, e.c, tn("t"), mappedSchema)
	long := strings.Repeat("k", 300)
	_, w := prepare(t, e.k, tn("t"), &catalog.Edit{SetProperties: map[string]string{long: "v"}, Version: 2, CommitTimestampMs: 1})
	rf := e.k.Preflight(w)
	if rf == nil || !rf.PreFlight || rf.Action != "set-properties" || rf.Type != catalog.TypeValueTooLong || !strings.Contains(rf.Message, "300 characters") {
		t.Fatalf("preflight %+v", rf)
	}
	e.srv.ResetRequests()
	_, err := e.k.Send(context.Background(), w)
	got, ok := refusalOf(err)
	if !errors.Is(err, catalog.ErrRefused) || !ok || !cmp.Equal(got, *rf) {
		t.Errorf("send: %v, refusal %+v, want %+v", err, got, *rf)
	}
	if n := requests(e.srv, "POST", "/delta/v1/"); n != 0 {
		t.Errorf("%d updates sent", n)
	}
}

// A refused action (Databricks' clustering updates) is split off: the
// fallback is the update without it and without the watermark, which the
// server takes; the watermark stays. Nothing falls back when only the
// watermark would be left, or when the refusal names no action.
func TestKindFallbackSplitsOffTheRefusedAction(t *testing.T) {
	e := newKindEnv(t, uctest.WithClusteringUpdatesRefused())
	ctx := context.Background()
	registerTable(t, e.c, tn("t"), mappedSchema)
	edit := &catalog.Edit{SetProperties: map[string]string{"owner.team": "data"}, Clustering: [][]string{{"id"}}, SetClustering: true,
		Version: 4, CommitTimestampMs: 1700000001000}
	read, w := prepare(t, e.k, tn("t"), edit)
	_, err := e.k.Send(ctx, w)
	rf, ok := refusalOf(err)
	if !errors.Is(err, catalog.ErrRefused) || !ok || rf.Status != 400 || !strings.Contains(rf.Message, "delta.clustering is not allowed") {
		t.Fatalf("send: %v, refusal %+v", err, rf)
	}
	if a := e.k.RefusedAction(rf, w); a != "set-domain-metadata" {
		t.Errorf("refused action %q", a)
	}
	ws := e.k.Fallback(read, catalog.LogState{Version: 4}, edit, w, rf)
	if len(ws) != 1 || !slices.Equal(ws[0].Actions, []string{"set-properties"}) || ws[0].Etag != read.Etag || ws[0].TableID != read.ID ||
		strings.Contains(string(ws[0].Request), "snapshot-version") || strings.Contains(string(ws[0].Request), "domain") {
		t.Fatalf("fallback %+v", ws)
	}
	if _, err := e.k.Send(ctx, ws[0]); err != nil {
		t.Fatal(err)
	}
	after, _ := e.srv.Table("main.s.t")
	if after.Properties["owner.team"] != "data" || after.Properties["delta.lastUpdateVersion"] != "0" {
		t.Errorf("after the fallback: %v", after.Properties)
	}

	only := &catalog.Edit{Clustering: [][]string{{"id"}}, SetClustering: true, Version: 4, CommitTimestampMs: 1}
	read, w = prepare(t, e.k, tn("t"), only)
	if ws := e.k.Fallback(read, catalog.LogState{Version: 4}, only, w, rf); ws != nil {
		t.Errorf("nothing but the refused action and the watermark: fallback %+v", ws)
	}
	if ws := e.k.Fallback(read, catalog.LogState{Version: 4}, edit, w, catalog.Refusal{Status: 400, Message: "no"}); ws != nil {
		t.Errorf("a refusal naming no action: fallback %+v", ws)
	}
}

// renamed is mappedSchema with price, tags and s renamed cost, labels and
// st (same column-mapping identities).
func renamed(t *testing.T) catalog.StructType {
	t.Helper()
	s := strings.NewReplacer(`"name":"price"`, `"name":"cost"`, `"name":"tags"`, `"name":"labels"`, `"name":"s"`, `"name":"st"`).Replace(mappedSchema)
	cols, err := catalog.ColumnsFromSchemaString(s)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// A server with the set-columns guards takes one top-level rename per
// request: the refused set-columns falls back to the renames in steps (a
// set-columns each, the etag of each the one the step before left), the
// last the planned update whole, and the record ends as the log's.
func TestKindFallbackRenamesInSteps(t *testing.T) {
	e := newKindEnv(t, uctest.WithColumnRenameGuards())
	ctx := context.Background()
	registerTable(t, e.c, tn("t"), mappedSchema)
	cols := renamed(t)
	edit := &catalog.Edit{Columns: &cols, Renames: map[string]string{"price": "cost", "tags": "labels", "s": "st"},
		SetProperties: map[string]string{"owner.team": "data"}, Version: 6, CommitTimestampMs: 1700000001000}
	read, w := prepare(t, e.k, tn("t"), edit)
	_, err := e.k.Send(ctx, w)
	rf, ok := refusalOf(err)
	if !errors.Is(err, catalog.ErrRefused) || !ok || !strings.Contains(rf.Message, "At most one top-level column rename") {
		t.Fatalf("send: %v", err)
	}
	if a := e.k.RefusedAction(rf, w); a != "set-columns" {
		t.Errorf("refused action %q", a)
	}
	ws := e.k.Fallback(read, catalog.LogState{Version: 6}, edit, w, rf)
	if len(ws) != 3 {
		t.Fatalf("%d writes, want 2 steps and the update", len(ws))
	}
	for i, s := range ws[:2] {
		if s.Edit != nil || !slices.Equal(s.Actions, []string{"set-columns"}) || s.TableID != read.ID {
			t.Errorf("step %d: %+v", i+1, s)
		}
	}
	if last := ws[2]; last.Edit != edit || string(last.Request) != string(w.Request) || !slices.Equal(last.Actions, w.Actions) {
		t.Errorf("last step %+v, want the planned write", last)
	}
	etag := read.Etag
	for i, s := range ws {
		s.Etag = etag
		sent, err := e.k.Send(ctx, s)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		etag = sent.Etag
	}
	after, _ := e.srv.Table("main.s.t")
	var got []string
	for _, f := range after.Columns.Fields {
		got = append(got, f.Name)
	}
	if !slices.Equal(got, []string{"id", "cost", "labels", "st"}) || after.Properties["delta.lastUpdateVersion"] != "6" ||
		after.Properties["owner.team"] != "data" {
		t.Errorf("columns %v, properties %v", got, after.Properties)
	}

	// One rename is no step: set-columns is split off like any action.
	one := &catalog.Edit{Columns: &cols, Renames: map[string]string{"price": "cost"}, SetProperties: map[string]string{"x": "y"}, Version: 7, CommitTimestampMs: 1}
	read, w = prepare(t, e.k, tn("t"), one)
	if ws := e.k.Fallback(read, catalog.LogState{Version: 7}, one, w, rf); len(ws) != 1 || !slices.Equal(ws[0].Actions, []string{"set-properties"}) {
		t.Errorf("one rename: fallback %+v", ws)
	}
}
