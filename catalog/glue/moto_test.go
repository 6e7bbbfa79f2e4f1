package glue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/internal/fakeglue"
)

// These tests run against moto behind internal/fakeglue, which answers as
// Glue does where moto does not (VersionId, paging). They are not AWS.

func TestMotoRegisterAndReadBack(t *testing.T) {
	ctx := context.Background()
	c, _, db := motoClient(t, Config{})
	d := desired()
	d.Location = "s3://lake/" + db + "/t"
	in, err := NewTableInput("t", d)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, db, in); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, db, in); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("second CreateTable: err = %v, want ErrAlreadyExists", err)
	}
	tb, err := c.GetTable(ctx, db, "t")
	if err != nil {
		t.Fatal(err)
	}
	if why := WhyNotDelta(tb); why != "" {
		t.Fatalf("registered table is not Delta: %s", why)
	}
	r, err := ReadRecord(tb)
	if err != nil {
		t.Fatal(err)
	}
	if r.Shape != ShapeNative || r.Location != d.Location || r.VersionID == "" {
		t.Errorf("read back shape %v location %q VersionId %q", r.Shape, r.Location, r.VersionID)
	}
	checkOwned(t, r, d)
	_, err = c.GetTable(ctx, db, "nope")
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("GetTable of a missing table: err = %v, want catalog.ErrNotFound", err)
	}
	var enf *types.EntityNotFoundException
	if !errors.As(err, &enf) {
		t.Errorf("the SDK's typed error is not reachable: %v", err)
	}
}

// A guarded update wins at the VersionId it read and loses (ErrConflict)
// at a stale one; it sends SkipArchive=true unless told to archive.
func TestMotoGuardedUpdate(t *testing.T) {
	ctx := context.Background()
	for _, archive := range []bool{false, true} {
		t.Run(fmt.Sprintf("archive=%v", archive), func(t *testing.T) {
			c, p, db := motoClient(t, Config{ArchiveVersions: archive})
			if err := c.CreateTable(ctx, db, InputOf(sparkTable())); err != nil {
				t.Fatal(err)
			}
			tb, err := c.GetTable(ctx, db, "events")
			if err != nil {
				t.Fatal(err)
			}
			in, err := Apply(tb, desired())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Update(ctx, db, in, aws.ToString(tb.VersionId)); err != nil {
				t.Fatalf("update at the VersionId read: %v", err)
			}
			stale := desired()
			stale.Version = 11
			in2, _ := Apply(tb, stale)
			err = c.Update(ctx, db, in2, aws.ToString(tb.VersionId))
			if !errors.Is(err, catalog.ErrConflict) || !errors.Is(err, ErrConflict) {
				t.Fatalf("update at a stale VersionId: err = %v, want ErrConflict", err)
			}
			now, _ := c.GetTable(ctx, db, "events")
			if r, _ := ReadRecord(now); r.Version != 10 {
				t.Errorf("record at version %d after the lost write, want the winner's 10", r.Version)
			}
			ups := p.Updates()
			if len(ups) != 2 {
				t.Fatalf("%d UpdateTable sent, want 2 (a conflict is not retried)", len(ups))
			}
			for _, u := range ups {
				if u.VersionID != aws.ToString(tb.VersionId) || u.SkipArchive == nil || *u.SkipArchive == archive {
					t.Errorf("UpdateTable sent %+v, want VersionId %s and SkipArchive %v", u, aws.ToString(tb.VersionId), !archive)
				}
			}
		})
	}
}

// deltasync's update is held at the proxy while another writer (Trino,
// Spark's catalog hook: any client sending UpdateTable) commits; released,
// it is refused and the other writer's record stays.
func TestMotoHeldUpdateLosesToAnotherWriter(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	if err := c.CreateTable(ctx, db, InputOf(sparkTable())); err != nil {
		t.Fatal(err)
	}
	tb, _ := c.GetTable(ctx, db, "events")
	in, _ := Apply(tb, desired())
	hold := p.Hold("UpdateTable")
	done := make(chan error, 1)
	go func() { done <- c.Update(ctx, db, in, aws.ToString(tb.VersionId)) }()
	<-hold.Arrived()
	other := InputOf(tb)
	other.Parameters["owner_team"] = "other writer"
	if _, err := c.API().UpdateTable(ctx, &sdkglue.UpdateTableInput{DatabaseName: aws.String(db), TableInput: other, VersionId: tb.VersionId}); err != nil {
		t.Fatal(err)
	}
	hold.Release()
	if err := <-done; !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("held update: err = %v, want ErrConflict", err)
	}
	now, _ := c.GetTable(ctx, db, "events")
	if now.Parameters["owner_team"] != "other writer" || now.Parameters[KeyLastUpdateVersion] != "2" {
		t.Errorf("the other writer's record was replaced: %v", now.Parameters)
	}
}

// A listing costs ceil(N/100) GetTables and no GetTable: 250 tables, 3
// pages of 100, 100 and 50, every table once.
func TestMotoTablesPagesOf100(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	var want []string
	for i := range 250 {
		name := fmt.Sprintf("t%03d", i)
		if err := c.CreateTable(ctx, db, &types.TableInput{Name: aws.String(name), TableType: aws.String("EXTERNAL_TABLE")}); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	p.ResetCounts()
	var got []string
	var sizes []int
	err := c.TablesPages(ctx, db, func(page []types.Table) error {
		sizes = append(sizes, len(page))
		for _, tb := range page {
			got = append(got, aws.ToString(tb.Name))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(sizes, []int{100, 100, 50}) || !slices.Equal(got, want) {
		t.Errorf("pages %v, %d tables; want [100 100 50] of the 250", sizes, len(got))
	}
	if counts := p.Calls(); counts["GetTables"] != 3 || counts["GetTable"] != 0 {
		t.Errorf("calls %v, want 3 GetTables and no GetTable", counts)
	}
	stop := errors.New("stop")
	if err := c.TablesPages(ctx, db, func([]types.Table) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v", err)
	}
	if err := c.TablesPages(ctx, "no_such_db", func([]types.Table) error { return nil }); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing database: err = %v, want ErrNotFound", err)
	}
	dbs, err := c.Databases(ctx)
	if err != nil || !slices.Contains(dbs, db) {
		t.Errorf("Databases: %v (err %v), want it to hold %s", dbs, err, db)
	}
}

// Throttling is retried by the SDK's retryer; refusals are not and come
// back as ErrRefused with a catalog.Refusal.
func TestMotoFaults(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	if err := c.CreateTable(ctx, db, InputOf(sparkTable())); err != nil {
		t.Fatal(err)
	}
	p.ResetCounts()
	p.Inject("GetTable", fakeglue.Fault{Type: "ThrottlingException", Message: "Rate exceeded", Times: 1})
	tb, err := c.GetTable(ctx, db, "events")
	if err != nil || p.Count("GetTable") != 2 {
		t.Fatalf("GetTable throttled once: err %v after %d requests, want success after 2", err, p.Count("GetTable"))
	}
	in, _ := Apply(tb, desired())
	for _, f := range []fakeglue.Fault{fakeglue.AccessDenied, fakeglue.ResourceNumberLimitExceeded} {
		p.ResetCounts()
		p.Inject("UpdateTable", f)
		err := c.Update(ctx, db, in, aws.ToString(tb.VersionId))
		r, ok := RefusalOf(err)
		if !errors.Is(err, catalog.ErrRefused) || !ok || r.Type != f.Type || r.Message != f.Message || r.Operation != "UpdateTable" || r.Status != 400 {
			t.Errorf("%s: err %v, refusal %+v", f.Type, err, r)
		}
		if n := p.Count("UpdateTable"); n != 1 {
			t.Errorf("%s: sent %d times, want 1 (a refusal is not retried)", f.Type, n)
		}
	}
}

// The Observer sees every request sent, retries included, with its
// operation and typed error: what a requests metric counts.
func TestMotoObserverSeesEveryAttempt(t *testing.T) {
	ctx := context.Background()
	type call struct {
		op  string
		err string
	}
	var mu sync.Mutex
	var calls []call
	c, p, db := motoClient(t, Config{Observer: func(op string, _ time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		code := ""
		var api smithy.APIError
		if errors.As(err, &api) {
			code = api.ErrorCode()
		}
		calls = append(calls, call{op, code})
	}})
	if err := c.CreateTable(ctx, db, InputOf(sparkTable())); err != nil {
		t.Fatal(err)
	}
	p.Inject("GetTable", fakeglue.Throttling)
	if _, err := c.GetTable(ctx, db, "events"); err != nil {
		t.Fatal(err)
	}
	_, _ = c.GetTable(ctx, db, "nope")
	mu.Lock()
	defer mu.Unlock()
	want := []call{{"CreateDatabase", ""}, {"CreateTable", ""}, {"GetTable", "ThrottlingException"}, {"GetTable", ""}, {"GetTable", "EntityNotFoundException"}}
	if !slices.Equal(calls, want) {
		t.Errorf("observed %v, want %v", calls, want)
	}
	if n := p.Count("GetTable"); n != 3 {
		t.Errorf("proxy counted %d GetTable, the observer %d", n, 3)
	}
}
