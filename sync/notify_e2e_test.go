package sync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	stdsync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"gocloud.dev/pubsub/natspubsub"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/notify"
)

// lineageReceiver is an OpenLineage HTTP endpoint that keeps the events
// posted to /api/v1/lineage.
type lineageReceiver struct {
	mu     stdsync.Mutex
	events []map[string]any
}

func (l *lineageReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/api/v1/lineage" || req.Header.Get("Authorization") != "Bearer ol-key" {
		http.Error(w, "wrong path or key", http.StatusUnauthorized)
		return
	}
	b, _ := io.ReadAll(req.Body)
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// changeRow is a change row as the three places record it.
type changeRow struct{ Kind, Field, Op, Class string }

// TestNotifyEndToEnd: a delta-rs schema change synced to the real Unity
// Catalog (or uctest) yields one OpenLineage event with the new schema at
// the receiver, one CloudEvent on the bus (embedded NATS) and one audit
// record — all three agreeing on the table, the version and the change
// rows; the next cycle, in sync, sends nothing.
func TestNotifyEndToEnd(t *testing.T) {
	py := deltarsPython(t)
	e := deltarsEnv(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "orders")
	evolve(t, py, dir, "create")
	if _, err := sync.Register(ctx, kindOf(e.client), snapshot(t, dir), e.name("orders"), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	evolve(t, py, dir, "add_column") // v1: a new column, score

	var ol lineageReceiver
	srv := httptest.NewServer(&ol)
	defer srv.Close()
	olSink, err := notify.NewOpenLineage(srv.URL, "ol-key", notify.Lineage{CatalogName: "unity", CatalogURI: e.client.BaseURL()}, notify.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := startNATS(t, 0)
	defer ns.Shutdown()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := natspubsub.OpenSubscriptionV2(nc, "deltasync.changes", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Shutdown(ctx) }()
	topic, err := natspubsub.OpenTopicV2(nc, "deltasync.changes", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = topic.Shutdown(ctx) }()
	d := notify.New(notify.Options{Instance: "e2e"}, olSink, notify.NewTopic("pubsub:nats", topic))
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	rules := []sync.Rule{{Include: []string{e.catalog + ".s.*"}}}
	rec := e.reconciler(rules, func(o *sync.Options) {
		o.Notifier = d
		o.Audit = change.AuditOptions{Writer: aw, Command: "once", Version: "test"}
	})
	for cycle := range 2 { // the second finds the table in sync: no event
		rep := rec.Sync(ctx)
		if got := outcomes(e, rep)["orders"]; got != map[int]sync.Outcome{0: sync.OutcomeSynced, 1: sync.OutcomeUnchanged}[cycle] {
			t.Fatalf("cycle %d: orders %s\n%s", cycle, got, reportText(rep))
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.Close(dctx); err != nil {
		t.Fatal(err)
	}
	_ = aw.Close()

	// The CloudEvent on the bus.
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	msg, err := sub.Receive(rctx)
	if err != nil {
		t.Fatalf("no CloudEvent on the bus: %v", err)
	}
	msg.Ack()
	var ce notify.CloudEvent
	if err := json.Unmarshal(msg.Body, &ce); err != nil {
		t.Fatal(err)
	}
	table := e.name("orders").String()
	if ce.Type != "io.deltasync.table.synced" || ce.Subject != table || ce.Data.LogVersion == nil || *ce.Data.LogVersion != 1 {
		t.Fatalf("CloudEvent %+v", ce)
	}
	var busRows []changeRow
	for _, c := range ce.Data.Changes {
		busRows = append(busRows, changeRow{c.Kind, c.Field, c.Op, c.Class})
	}
	mctx, mcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer mcancel()
	if extra, err := sub.Receive(mctx); err == nil {
		extra.Ack()
		t.Errorf("a second CloudEvent on the bus: %s", extra.Body)
	}

	// The OpenLineage event.
	ol.mu.Lock()
	events := ol.events
	ol.mu.Unlock()
	if len(events) != 1 {
		t.Fatalf("%d OpenLineage events, want 1: %v", len(events), events)
	}
	facets := events[0]["outputs"].([]any)[0].(map[string]any)["facets"].(map[string]any)
	var names []string
	for _, f := range facets["schema"].(map[string]any)["fields"].([]any) {
		names = append(names, f.(map[string]any)["name"].(string))
	}
	if !cmp.Equal(names[len(names)-1], "score") || facets["version"].(map[string]any)["datasetVersion"] != "1" {
		t.Errorf("OpenLineage schema %v, version %v: want the new column score at version 1", names, facets["version"])
	}
	changes := facets[notify.ChangesFacet].(map[string]any)
	if changes["eventId"] != ce.ID || facets["symlinks"].(map[string]any)["identifiers"].([]any)[0].(map[string]any)["name"] != table {
		t.Errorf("OpenLineage event id %v / table, CloudEvent id %s / %s", changes["eventId"], ce.ID, table)
	}
	var olRows []changeRow
	for _, c := range changes["changes"].([]any) {
		m := c.(map[string]any)
		olRows = append(olRows, changeRow{m["kind"].(string), m["field"].(string), m["op"].(string), m["class"].(string)})
	}

	// The audit record.
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []audit.Record
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 1 || recs[0].Table != table || recs[0].Outcome != audit.OutcomeSynced || recs[0].LogVersion == nil || *recs[0].LogVersion != 1 {
		t.Fatalf("audit records %+v", recs)
	}
	var auditRows []changeRow
	for _, c := range recs[0].Changes {
		if c.Kind != "version" { // the watermark, which the events leave out beside other changes
			auditRows = append(auditRows, changeRow{c.Kind, c.Field, c.Op, c.Class})
		}
	}
	if len(busRows) == 0 || !cmp.Equal(busRows, olRows) || !cmp.Equal(busRows, auditRows) {
		t.Errorf("change rows disagree:\nbus   %v\nOL    %v\naudit %v", busRows, olRows, auditRows)
	}
}
