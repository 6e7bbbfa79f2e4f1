package uc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/internal/testenv"
)

// runKindFlow drives the kind through a table's life as sync does against
// any spec-faithful server: register, list, load from the listing, write
// under the guard and lose with a stale one, register the name again.
func runKindFlow(t *testing.T, c *uc.Client) {
	ctx := context.Background()
	cat := fmt.Sprintf("dskind_%d", time.Now().UnixNano())
	if _, err := c.CreateCatalog(ctx, uc.CreateCatalogRequest{Name: cat, Comment: "deltasync kind test"}); err != nil {
		t.Fatalf("CreateCatalog: %v", err)
	}
	t.Cleanup(func() {
		if err := c.DeleteCatalog(context.Background(), cat, true); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	k := uc.NewKind(c, uc.KindOptions{})
	name := catalog.TableName{Catalog: cat, Schema: "s", Table: "orders"}
	if err := k.CreateSchema(ctx, name); err != nil {
		t.Fatal(err)
	}
	log := logState()
	reg, err := k.Registration(name, "file://"+t.TempDir()+"/orders", log)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := k.Register(ctx, reg); err != nil || v == nil || *v != log.Version {
		t.Fatalf("Register = %v, %v", v, err)
	}

	var l *catalog.Listed
	err = k.List(ctx, scope{catalogs: []string{cat}}, func(x catalog.Listed) bool {
		if x.Name.Table == name.Table {
			l = &x
		}
		return true
	})
	if err != nil || l == nil || l.NotDelta != "" || l.UpdatedAt == 0 {
		t.Fatalf("List: %+v, %v", l, err)
	}
	read, err := k.Load(ctx, name, l)
	if err != nil {
		t.Fatal(err)
	}
	// The fast path's premise: the listing's updated_at is the record's.
	if read.UpdatedTime != l.UpdatedAt || read.ID != l.ID || read.Comment != log.Description ||
		read.LastCommitVersion == nil || *read.LastCommitVersion != log.Version {
		t.Errorf("read %+v, listed %+v", read.Record, *l)
	}

	comment := "orders v2"
	edit := &catalog.Edit{SetProperties: map[string]string{"owner.team": "sync"}, Comment: &comment,
		Version: log.Version + 1, CommitTimestampMs: log.CommitTimestamp + 1000}
	w, err := k.Prepare(read, catalog.LogState{Version: edit.Version}, edit)
	if err != nil {
		t.Fatal(err)
	}
	if rf := k.Preflight(w); rf != nil {
		t.Errorf("preflight %+v", rf)
	}
	sent, err := k.Send(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	after, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.Etag != sent.Etag || !sent.Own || after.Comment != comment || after.Properties["owner.team"] != "sync" ||
		*after.LastCommitVersion != edit.Version {
		t.Errorf("after the write: sent %+v, read %+v", sent, after.Record)
	}
	if _, err := k.Send(ctx, w); !errors.Is(err, catalog.ErrConflict) {
		t.Errorf("stale etag: %v", err)
	}
	if _, err := k.Register(ctx, reg); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("registered again: %v", err)
	}
}

func TestKindFlowUCTest(t *testing.T) {
	srv := spectest.NewForTest(t)
	c, err := uc.New(srv.URL(), uc.Options{Version: "test", Token: uc.StaticToken("tok")})
	if err != nil {
		t.Fatal(err)
	}
	runKindFlow(t, c)
}

// TestKindFlowRealServer runs the same flow against the real Unity Catalog
// server (DELTASYNC_UC_URL; see TestClientFlowRealServer).
func TestKindFlowRealServer(t *testing.T) {
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
	runKindFlow(t, c)
}
