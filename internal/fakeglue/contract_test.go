package fakeglue

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// The contract: what the AWS SDK for Go v2 sees from proxy+moto is what
// Glue's API reference says it sees from Glue. Each test cites the
// reference it pins.

// UpdateTable, VersionId: "The version ID at which to update the table
// contents." Errors: ConcurrentModificationException, HTTP 400
// (https://docs.aws.amazon.com/glue/latest/webapi/API_UpdateTable.html;
// botocore service-2.json, operation UpdateTable). The SDK's standard
// retryer does not retry it: one request.
func TestContractStaleVersionIDIsConcurrentModification(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 3)
	db := freshDB(t, c)
	createTable(t, c, db, "t")
	v1 := versionID(t, c, db, "t")
	if err := update(c, db, "t", 1, aws.String(v1), nil); err != nil {
		t.Fatalf("update at the current VersionId %s: %v", v1, err)
	}
	if v2 := versionID(t, c, db, "t"); v2 == v1 {
		t.Fatalf("VersionId still %s after an update", v2)
	}
	p.ResetCounts()
	err := update(c, db, "t", 2, aws.String(v1), nil)
	var cme *types.ConcurrentModificationException
	if !errors.As(err, &cme) {
		t.Fatalf("update at stale VersionId %s: err = %v, want *types.ConcurrentModificationException", v1, err)
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Errorf("status: %v, want HTTP 400", err)
	}
	if cme.ErrorMessage() != "Update table failed due to concurrent modifications." {
		t.Errorf("message %q, want Glue's", cme.ErrorMessage())
	}
	if n := p.Count("UpdateTable"); n != 1 {
		t.Errorf("UpdateTable sent %d times, want 1 (not retried)", n)
	}
	for _, bad := range []string{"999", "not-a-number"} {
		if err := update(c, db, "t", 3, aws.String(bad), nil); !errors.As(err, &cme) {
			t.Errorf("VersionId %q: err = %v, want ConcurrentModificationException", bad, err)
		}
	}
	if err := update(c, db, "t", 3, nil, nil); err != nil {
		t.Errorf("update without VersionId (unguarded, as on Glue): %v", err)
	}
}

// Two writers that read the same VersionId: exactly one update lands, the
// other gets ConcurrentModificationException (Glue's whole-table
// optimistic lock). deltasync's update is held at the proxy while another
// client writes, then released.
func TestContractHeldUpdateLosesToAnotherWriter(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 3)
	db := freshDB(t, c)
	createTable(t, c, db, "t")
	v := versionID(t, c, db, "t")
	hold := p.Hold("UpdateTable")
	done := make(chan error, 1)
	go func() { done <- update(c, db, "t", 1, aws.String(v), aws.Bool(true)) }()
	<-hold.Arrived()
	if err := update(c, db, "t", 7, aws.String(v), nil); err != nil {
		t.Fatalf("the other writer's update: %v", err)
	}
	hold.Release()
	var cme *types.ConcurrentModificationException
	if err := <-done; !errors.As(err, &cme) {
		t.Fatalf("the held update: err = %v, want ConcurrentModificationException", err)
	}
	out, err := c.GetTable(context.Background(), &sdkglue.GetTableInput{DatabaseName: aws.String(db), Name: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Table.Parameters["delta.lastUpdateVersion"]; got != "7" {
		t.Errorf("record version %s, want the other writer's 7", got)
	}
}

// GetTables / GetDatabases, MaxResults: CatalogGetterPageSize, min 1, max
// 100; NextToken: "A continuation token, present if the current list
// segment is not the last"
// (https://docs.aws.amazon.com/glue/latest/webapi/API_GetTables.html,
// API_GetDatabases.html; botocore service-2.json shape
// CatalogGetterPageSize {"type":"integer","max":100,"min":1}).
func TestContractPaging(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 3)
	db := freshDB(t, c)
	var want []string
	for i := range 8 {
		name := fmt.Sprintf("t%d", 7-i) // created out of order
		createTable(t, c, db, name)
		want = append(want, name)
	}
	slices.Sort(want)
	pg := sdkglue.NewGetTablesPaginator(c, &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(3)})
	var got []string
	var sizes []int
	for pg.HasMorePages() {
		out, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(out.TableList))
		for _, tb := range out.TableList {
			got = append(got, aws.ToString(tb.Name))
		}
	}
	if !slices.Equal(sizes, []int{3, 3, 2}) || !slices.Equal(got, want) {
		t.Errorf("pages %v of %v, want [3 3 2] of %v", sizes, got, want)
	}
	out, err := c.GetTables(context.Background(), &sdkglue.GetTablesInput{DatabaseName: aws.String(db)})
	if err != nil || len(out.TableList) != 8 || out.NextToken != nil {
		t.Errorf("no MaxResults: %d tables, NextToken %v, err %v; want all 8 in one page (default 100)", len(out.TableList), out.NextToken, err)
	}
	for _, bad := range []int32{0, 101, 1001} {
		_, err := c.GetTables(context.Background(), &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(bad)})
		var ve *types.ValidationException
		if !errors.As(err, &ve) {
			t.Errorf("MaxResults %d: err = %v, want *types.ValidationException", bad, err)
		}
	}
	_, err = c.GetTables(context.Background(), &sdkglue.GetTablesInput{DatabaseName: aws.String(db), NextToken: aws.String("%%%")})
	var ie *types.InvalidInputException
	if !errors.As(err, &ie) {
		t.Errorf("bad NextToken: err = %v, want *types.InvalidInputException", err)
	}
	freshDB(t, c)
	freshDB(t, c)
	dp := sdkglue.NewGetDatabasesPaginator(c, &sdkglue.GetDatabasesInput{MaxResults: aws.Int32(2)})
	pages, dbs := 0, 0
	for dp.HasMorePages() {
		out, err := dp.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(out.DatabaseList) > 2 {
			t.Fatalf("GetDatabases page of %d, MaxResults 2", len(out.DatabaseList))
		}
		pages++
		dbs += len(out.DatabaseList)
	}
	if dbs < 3 || pages < 2 {
		t.Errorf("GetDatabases: %d databases in %d pages, want ≥3 in ≥2", dbs, pages)
	}
}

// UpdateTable, SkipArchive: "if skipArchive is set to true, UpdateTable
// does not create the archived version" — moto archives regardless, so
// the proxy records what was sent.
func TestContractRecordsUpdates(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 3)
	db := freshDB(t, c)
	createTable(t, c, db, "t")
	v := versionID(t, c, db, "t")
	if err := update(c, db, "t", 1, aws.String(v), aws.Bool(true)); err != nil {
		t.Fatal(err)
	}
	if err := update(c, db, "t", 2, nil, nil); err != nil {
		t.Fatal(err)
	}
	got := p.Updates()
	if len(got) != 2 {
		t.Fatalf("recorded %d updates, want 2", len(got))
	}
	if g := got[0]; g.Database != db || g.Table != "t" || g.VersionID != v || g.SkipArchive == nil || !*g.SkipArchive {
		t.Errorf("first update recorded as %+v, want VersionId %s SkipArchive true", g, v)
	}
	if g := got[1]; g.VersionID != "" || g.SkipArchive != nil {
		t.Errorf("second update recorded as %+v, want neither VersionId nor SkipArchive", g)
	}
	if n := p.Count("GetTable"); n != 1 {
		t.Errorf("GetTable counted %d, want 1 (the proxy's own check is not counted)", n)
	}
}

// Injected faults come out of the SDK as the typed errors Glue's model
// declares (awsJson1_1: X-Amzn-ErrorType + {"__type","message"}), and
// ThrottlingException is retried by the SDK's standard retryer.
func TestContractFaults(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 3)
	db := freshDB(t, c)
	createTable(t, c, db, "t")
	get := func() error {
		_, err := c.GetTable(context.Background(), &sdkglue.GetTableInput{DatabaseName: aws.String(db), Name: aws.String("t")})
		return err
	}
	for _, tc := range []struct {
		fault Fault
		is    func(error) bool
		sent  int
	}{
		{AccessDenied, func(err error) bool { var e *types.AccessDeniedException; return errors.As(err, &e) }, 1},
		{ResourceNumberLimitExceeded, func(err error) bool { var e *types.ResourceNumberLimitExceededException; return errors.As(err, &e) }, 1},
		{EntityNotFound, func(err error) bool { var e *types.EntityNotFoundException; return errors.As(err, &e) }, 1},
		{Fault{Type: Throttling.Type, Message: Throttling.Message, Times: 3}, func(err error) bool {
			var e interface{ ErrorCode() string }
			return errors.As(err, &e) && e.ErrorCode() == "ThrottlingException"
		}, 3},
		{Fault{Type: Throttling.Type, Message: Throttling.Message, Times: 1}, func(err error) bool { return err == nil }, 2},
		{Fault{Type: InternalError.Type, Status: 500, Times: 1}, func(err error) bool { return err == nil }, 2},
	} {
		t.Run(fmt.Sprintf("%s×%d", tc.fault.Type, max(tc.fault.Times, 1)), func(t *testing.T) {
			p.ResetCounts()
			p.Inject("GetTable", tc.fault)
			if err := get(); !tc.is(err) {
				t.Errorf("err = %v", err)
			}
			if n := p.Count("GetTable"); n != tc.sent {
				t.Errorf("GetTable sent %d times, want %d", n, tc.sent)
			}
		})
	}
}

func TestLatency(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 1)
	p.SetLatency(100 * time.Millisecond)
	start := time.Now()
	if _, err := c.GetDatabases(context.Background(), &sdkglue.GetDatabasesInput{MaxResults: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("call took %v with 100ms latency injected", d)
	}
}

// Eight writers send UpdateTable from the same VersionId at once: exactly
// one lands (the check and the write are one step per table, as Glue's
// optimistic lock is), the other seven get ConcurrentModificationException.
func TestContractOneOfConcurrentWritersWins(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 1)
	db := freshDB(t, c)
	createTable(t, c, db, "t")
	v := versionID(t, c, db, "t")
	errs := make(chan error, 8)
	for i := range 8 {
		go func() { errs <- update(c, db, "t", i+1, aws.String(v), aws.Bool(true)) }()
	}
	won, lost := 0, 0
	for range 8 {
		var cme *types.ConcurrentModificationException
		switch err := <-errs; {
		case err == nil:
			won++
		case errors.As(err, &cme):
			lost++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 || lost != 7 {
		t.Errorf("%d won, %d refused; want 1 and 7", won, lost)
	}
}

// TestPagingCutsOneAnswer: a listing's pages are cut from the answer its
// first page was (one moto listing per listing, not per page: at 10,000
// tables moto re-serializes every table for each), and a token whose
// answer is no longer kept goes on after its name from a fresh one.
func TestPagingCutsOneAnswer(t *testing.T) {
	p := Start(t)
	c := sdk(t, p.URL, 1)
	moto := sdk(t, MotoURL(t), 1)
	db := freshDB(t, c)
	for i := range 8 {
		createTable(t, c, db, fmt.Sprintf("t%d", i))
	}
	ctx := context.Background()
	first, err := c.GetTables(ctx, &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(3)})
	if err != nil || first.NextToken == nil {
		t.Fatalf("first page: %v, token %v", err, first.NextToken)
	}
	// Removed from moto after the first page: the listing's answer still has it.
	if _, err := moto.DeleteTable(ctx, &sdkglue.DeleteTableInput{DatabaseName: aws.String(db), Name: aws.String("t4")}); err != nil {
		t.Fatal(err)
	}
	second, err := c.GetTables(ctx, &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(3), NextToken: first.NextToken})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range second.TableList {
		names = append(names, aws.ToString(tb.Name))
	}
	if !slices.Equal(names, []string{"t3", "t4", "t5"}) {
		t.Errorf("second page %v, want [t3 t4 t5] from the first page's answer", names)
	}
	// A token of an answer not kept (id 999) goes on after its name, fresh.
	stale := base64.RawURLEncoding.EncodeToString([]byte("999:t2"))
	fresh, err := c.GetTables(ctx, &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(3), NextToken: aws.String(stale)})
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, tb := range fresh.TableList {
		names = append(names, aws.ToString(tb.Name))
	}
	if !slices.Equal(names, []string{"t3", "t5", "t6"}) {
		t.Errorf("page after a token not kept %v, want [t3 t5 t6] from moto as it is", names)
	}
}
