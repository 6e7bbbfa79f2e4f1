package glue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/internal/fakeglue"
)

// These tests run the Kind against moto behind internal/fakeglue (not AWS).

// kindLog is the log state of logSchema at version v.
func kindLog(v int64, loc string) catalog.LogState {
	return catalog.LogState{Version: v, CommitTimestamp: 1700000000000 + v, CommitTimestampInLog: true,
		Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, SchemaString: logSchema,
		PartitionColumns: []string{"dt"}, Configuration: map[string]string{"delta.appendOnly": "false"},
		Description: "from the log", Location: loc}
}

// scopeAll selects every table of one catalog.
type scopeAll struct{ catalog string }

func (s scopeAll) Catalogs() ([]string, bool)          { return []string{s.catalog}, false }
func (s scopeAll) MayMatchSchema(_, _ string) bool     { return true }
func (s scopeAll) Wants(n catalog.TableName) bool      { return n.Catalog == s.catalog }
func (s scopeAll) onlyDB(db string) scopeDB            { return scopeDB{s, db} }
func (s scopeDB) MayMatchSchema(_, schema string) bool { return schema == s.db }

type scopeDB struct {
	scopeAll
	db string
}

// syncOnce is one write of the log's state, as a reconcile makes it:
// Load, Prepare, Send.
func syncOnce(t *testing.T, k *Kind, name catalog.TableName, log catalog.LogState, from *catalog.Listed) *catalog.Write {
	t.Helper()
	ctx := context.Background()
	read, err := k.Load(ctx, name, from)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.Prepare(read, log, &catalog.Edit{Version: log.Version})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Send(ctx, w); err != nil {
		t.Fatalf("send %s: %v", name, err)
	}
	return w
}

// TestKindListIsTheSteadyCycle: a database of 250 tables is listed with
// 3 GetTables and GetDatabases' pages, nothing per table, and Load plans
// from what the listing carried without a request.
func TestKindListIsTheSteadyCycle(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	const n = 250
	for i := range n {
		in := &types.TableInput{Name: aws.String(fmt.Sprintf("t%03d", i)), TableType: aws.String("EXTERNAL_TABLE"),
			Parameters:        map[string]string{KeyProvider: ProviderDelta, KeySchema: logSchema, KeyLastUpdateVersion: "3"},
			StorageDescriptor: &types.StorageDescriptor{Columns: PlaceholderColumns(), SerdeInfo: &types.SerDeInfo{Parameters: map[string]string{SerdePath: "s3://lake/" + db}}}}
		if err := c.CreateTable(ctx, db, in); err != nil {
			t.Fatal(err)
		}
	}
	dbs, err := c.Databases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := NewKind(c, KindOptions{})
	p.ResetCounts()
	var got []catalog.Listed
	if err := k.List(ctx, scopeAll{DefaultKindName}.onlyDB(db), func(l catalog.Listed) bool { got = append(got, l); return true }); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"GetDatabases": (len(dbs) + PageSize - 1) / PageSize, "GetTables": 3}
	if c := p.Calls(); len(c) != 2 || c["GetDatabases"] != want["GetDatabases"] || c["GetTables"] != want["GetTables"] {
		t.Errorf("listing %d tables: requests %v, want %v", n, c, want)
	}
	if len(got) != n {
		t.Fatalf("%d tables listed, want %d", len(got), n)
	}
	l := got[7]
	if l.Name.String() != DefaultKindName+"."+db+".t007" || l.NotDelta != "" || l.UpdatedAt == 0 || l.Version == nil || *l.Version != 3 ||
		l.Location != "s3://lake/"+db || l.Type != catalog.TableTypeExternal || !strings.HasPrefix(l.ID, strings.ToLower(l.Name.String())+"@") {
		t.Errorf("listed %+v", l)
	}
	p.ResetCounts()
	read, err := k.Load(ctx, l.Name, &l)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); len(c) != 0 {
		t.Errorf("Load from the listing sent %v", c)
	}
	if read.UpdatedTime != l.UpdatedAt || read.ID != l.ID || read.Etag == "" || read.Columns.Fields == nil {
		t.Errorf("read %+v, listed %+v", read.Record, l)
	}
	// A catalog the scope does not name is not listed at all.
	p.ResetCounts()
	if err := k.List(ctx, scopeAll{"hive"}, func(catalog.Listed) bool { t.Error("emitted"); return true }); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); len(c) != 0 {
		t.Errorf("listing another catalog sent %v", c)
	}
}

// TestKindWriteIsGuardedByVersionId: Send is one UpdateTable with the
// VersionId read and SkipArchive; a record another client moved since is
// refused as catalog.ErrConflict and left as that client left it; the
// VersionId moves, so the listing shows the write (UpdatedAt).
func TestKindWriteIsGuardedByVersionId(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	if err := c.CreateTable(ctx, db, sparkInputOf("t", "s3://lake/t")); err != nil {
		t.Fatal(err)
	}
	k := NewKind(c, KindOptions{})
	name := catalog.TableName{Catalog: DefaultKindName, Schema: db, Table: "t"}
	before, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.ResetCounts()
	w := syncOnce(t, k, name, kindLog(1, "s3://lake/t"), nil)
	if u := p.Updates(); len(u) != 1 || u[0].VersionID != before.Etag || u[0].SkipArchive == nil || !*u[0].SkipArchive {
		t.Errorf("UpdateTable sent %+v, want VersionId %s and SkipArchive=true", u, before.Etag)
	}
	if cnt := p.Counts(); cnt["GetTable"] != 1 || cnt["UpdateTable"] != 1 || len(cnt) != 2 {
		t.Errorf("a write sent %v, want GetTable (Load) and one UpdateTable", cnt)
	}
	after, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.Etag == before.Etag || after.UpdatedTime == before.UpdatedTime || after.LastCommitVersion == nil || *after.LastCommitVersion != 1 {
		t.Errorf("after the write: etag %s (was %s), updated %d (was %d), version %v", after.Etag, before.Etag, after.UpdatedTime, before.UpdatedTime, after.LastCommitVersion)
	}
	// w again: its VersionId is stale now.
	sent, err := k.Send(ctx, w)
	if !errors.Is(err, catalog.ErrConflict) || !sent.Own {
		t.Errorf("a stale write: %v (own %v), want catalog.ErrConflict", err, sent.Own)
	}
	if again, _ := k.Load(ctx, name, nil); again.Etag != after.Etag {
		t.Errorf("a refused write moved the record: %s -> %s", after.Etag, again.Etag)
	}
}

// TestKindAthenaRecord: an Athena record (real columns, no Delta schema)
// is written in its shape — columns and partition keys from the log, the
// log's schema in deltasync.schema — and then reads as in sync; another
// client's edit of its columns is drift the kind reports (Check.Schema).
func TestKindAthenaRecord(t *testing.T) {
	ctx := context.Background()
	c, _, db := motoClient(t, Config{})
	in := InputOf(athenaTable())
	if err := c.CreateTable(ctx, db, in); err != nil {
		t.Fatal(err)
	}
	k := NewKind(c, KindOptions{})
	name := catalog.TableName{Catalog: DefaultKindName, Schema: db, Table: "clicks"}
	log := kindLog(4, "s3://lake/clicks")
	read, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Columns.Fields) != 0 {
		t.Errorf("an Athena record without deltasync.schema read as columns %v", read.Columns)
	}
	syncOnce(t, k, name, log, nil)
	tb, err := c.GetTable(ctx, db, "clicks")
	if err != nil {
		t.Fatal(err)
	}
	if ShapeOf(tb) != ShapeAthena || tb.Parameters[KeyProvider] != "" || tb.Parameters[KeyLogSchema] != logSchema {
		t.Errorf("after the write: shape %v, provider %q, %s %q", ShapeOf(tb), tb.Parameters[KeyProvider], KeyLogSchema, tb.Parameters[KeyLogSchema])
	}
	read, err = k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := read.ColumnsAsLog(); s != logSchema {
		t.Errorf("columns read back %s, want the log's", s)
	}
	if chk := k.Check(log, read); chk.Schema != "" || len(chk.Unsupported) != 0 || !chk.AnyType {
		t.Errorf("check after the write: %+v", chk)
	}
	// Another client adds a Glue column.
	other := InputOf(tb)
	other.StorageDescriptor.Columns = append(other.StorageDescriptor.Columns, types.Column{Name: aws.String("extra"), Type: aws.String("int")})
	if err := c.Update(ctx, db, other, aws.ToString(tb.VersionId)); err != nil {
		t.Fatal(err)
	}
	read, err = k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if chk := k.Check(log, read); !strings.Contains(chk.Schema, "extra int") {
		t.Errorf("check after another client's column: %+v, want Schema naming it", chk)
	}
	// A type Glue has no column type for cannot be held.
	variant := log
	variant.SchemaString = `{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}},{"name":"dt","type":"date","nullable":true,"metadata":{}}]}`
	if chk := k.Check(variant, read); len(chk.Unsupported) != 1 || !strings.Contains(chk.Unsupported[0], `field "v"`) {
		t.Errorf("check of a variant column: %+v", chk.Unsupported)
	}
}

// TestKindRegisterAndRefusals: a registration creates a native record in
// sync with the log; a name taken answers catalog.ErrAlreadyExists; a
// refused UpdateTable carries Glue's refusal; CheckWrite refuses what a
// sync never sends.
func TestKindRegisterAndRefusals(t *testing.T) {
	ctx := context.Background()
	c, p, db := motoClient(t, Config{})
	k := NewKind(c, KindOptions{})
	name := catalog.TableName{Catalog: DefaultKindName, Schema: db, Table: "r"}
	log := kindLog(2, "s3://lake/r")
	w, err := k.Registration(name, "s3://lake/r", log)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := k.Register(ctx, w); err != nil || *v != 2 {
		t.Fatalf("register: %v %v", v, err)
	}
	if _, err := k.Register(ctx, w); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("register again: %v, want catalog.ErrAlreadyExists", err)
	}
	read, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := read.ColumnsAsLog(); s != logSchema || *read.LastCommitVersion != 2 || read.Location != "s3://lake/r" {
		t.Errorf("registered record %+v", read.Record)
	}
	if chk := k.Check(log, read); chk.Schema != "" {
		t.Errorf("a registered record's columns: %s", chk.Schema)
	}
	if err := k.CreateSchema(ctx, name); err != nil {
		t.Errorf("CreateSchema of a database that exists: %v", err)
	}
	up, err := k.Prepare(read, kindLog(3, "s3://lake/r"), &catalog.Edit{Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	p.Inject("UpdateTable", fakeglue.AccessDenied)
	_, err = k.Send(ctx, up)
	if rf, ok := catalog.AsRefusal(err); !errors.Is(err, catalog.ErrRefused) || !ok || rf.Type != "AccessDeniedException" || rf.Operation != "UpdateTable" {
		t.Errorf("a refused write: %v, refusal %+v", err, rf)
	}
	bad := func(mutate func(w *catalog.Write)) error {
		cp := *up
		mutate(&cp)
		return k.CheckWrite(&cp)
	}
	input := func(f func(in *types.TableInput)) func(w *catalog.Write) {
		return func(w *catalog.Write) {
			var req writeRequest
			_ = json.Unmarshal(w.Request, &req)
			f(req.TableInput)
			w.Request, _ = json.Marshal(req)
		}
	}
	if err := k.CheckWrite(up); err != nil {
		t.Fatalf("CheckWrite of a prepared write: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(w *catalog.Write)
		want   string
	}{
		{"another kind", func(w *catalog.Write) { w.Kind = "hive-metastore" }, "not Glue's"},
		{"another catalog", func(w *catalog.Write) { w.Table.Catalog = "hive" }, "not a table of this Glue catalog"},
		{"no VersionId", func(w *catalog.Write) { w.Etag = "" }, "no VersionId"},
		{"another table", input(func(in *types.TableInput) { in.Name = aws.String("x") }), `Name "x" is another table`},
		{"not Delta", input(func(in *types.TableInput) { delete(in.Parameters, KeyProvider); delete(in.Parameters, KeyTableType) }), "not a Delta table's record"},
		{"another version", input(func(in *types.TableInput) { in.Parameters[KeyLastUpdateVersion] = "9" }), "not the write's log_version 3"},
		{"unknown field", func(w *catalog.Write) { w.Request = json.RawMessage(`{"table_input":{},"x":1}`) }, "unknown field"},
	} {
		if err := bad(tc.mutate); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckWrite %v, want %q", tc.name, err, tc.want)
		}
	}
}

// sparkInputOf is Spark's registration of a Delta table (no Delta state).
func sparkInputOf(name, loc string) *types.TableInput {
	return &types.TableInput{Name: aws.String(name), TableType: aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{"EXTERNAL": "TRUE", KeyProvider: ProviderDelta},
		StorageDescriptor: &types.StorageDescriptor{Columns: PlaceholderColumns(),
			Location:  aws.String(loc + "-__PLACEHOLDER__"),
			SerdeInfo: &types.SerDeInfo{Parameters: map[string]string{SerdePath: loc}}}}
}

// TestKindLostAnswerIsOutcomeUnknown: an UpdateTable applied whose answer
// is lost (a 500 after the write) is sent again by the SDK's retryer; the
// resend's VersionId is stale and Glue answers ConcurrentModification-
// Exception. That is not another writer's conflict: Send answers
// catalog.ErrOutcomeUnknown (the caller reads the record), not
// catalog.ErrConflict (which would re-plan and audit a write that was
// applied as refused).
func TestKindLostAnswerIsOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	c0, p, db := motoClient(t, Config{})
	if err := c0.CreateTable(ctx, db, sparkInputOf("t", "s3://lake/t")); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	armed.Store(true)
	lossy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.URL+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if r.Header.Get("X-Amz-Target") == "AWSGlue.UpdateTable" && armed.CompareAndSwap(true, false) {
			// Applied upstream; the answer is lost on the way back.
			w.Header().Set("X-Amzn-ErrorType", "InternalServiceException")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"InternalServiceException","message":"lost"}`))
			return
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(out)
	}))
	t.Cleanup(lossy.Close)
	c, err := New(ctx, Config{Region: "us-east-1", Endpoint: lossy.URL, Credentials: c0.Config().Credentials})
	if err != nil {
		t.Fatal(err)
	}
	k := NewKind(c, KindOptions{})
	name := catalog.TableName{Catalog: DefaultKindName, Schema: db, Table: "t"}
	read, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.Prepare(read, kindLog(1, "s3://lake/t"), &catalog.Edit{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Send(ctx, w)
	if !errors.Is(err, catalog.ErrOutcomeUnknown) || errors.Is(err, catalog.ErrConflict) {
		t.Errorf("a write applied whose answer was lost: %v; want catalog.ErrOutcomeUnknown, not catalog.ErrConflict", err)
	}
	if u := p.Updates(); len(u) != 2 || u[0].VersionID != u[1].VersionID {
		t.Errorf("updates sent %+v, want the write and the SDK's resend of it", u)
	}
	after, err := k.Load(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.LastCommitVersion == nil || *after.LastCommitVersion != 1 {
		t.Errorf("the record does not hold the write the lost answer was for: %v", after.LastCommitVersion)
	}
}
