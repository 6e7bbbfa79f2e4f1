package hms

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/internal/fakehms"
)

// fakeKind is a fake metastore playing version with Spark's registration
// of d.ev at file:/data/ev, and the Kind of it (o's options).
func fakeKind(t *testing.T, version string, o KindOptions) (*fakehms.Server, *Kind) {
	t.Helper()
	srv := fakehms.New(t, version)
	srv.Put(sparkRegistered("d", "ev", "file:/w/d.db", "file:/data/ev"))
	c, err := New(srv.URL, Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, NewKind(c, o)
}

var evName = catalog.TableName{Catalog: "hive", Schema: "d", Table: "ev"}

// logAt is the log's state at version v: hookSchema, one property, the
// protocol (1, 2).
func logAt(v int64) catalog.LogState {
	return catalog.LogState{Version: v, CommitTimestamp: 1_796_000_000_000 + v, SchemaString: hookSchema,
		Protocol:      catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
		Configuration: map[string]string{"delta.enableDeletionVectors": "true"}, PartitionColumns: []string{}}
}

// edited is the edit a plan makes to bring a record to log.
func edited(log catalog.LogState) *catalog.Edit {
	p := log.Protocol
	return &catalog.Edit{Protocol: &p, SetProperties: log.Configuration, Version: log.Version, CommitTimestampMs: log.CommitTimestamp}
}

// TestKindLoad: Load plans from the listing's record without a call, and
// reads the table (one get_table_req) when given none; a table that is not
// Delta answers catalog.ErrNotDelta with today's reason, one whose record
// cannot be read catalog.ErrUnsupported, a missing one catalog.ErrNotFound.
func TestKindLoad(t *testing.T) {
	srv, k := fakeKind(t, "4.0.1", KindOptions{})
	ctx := context.Background()
	var l catalog.Listed
	if err := k.List(ctx, scope{}, func(x catalog.Listed) bool { l = x; return true }); err != nil {
		t.Fatal(err)
	}
	srv.Calls()
	read, err := k.Load(ctx, evName, &l)
	if err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls(); len(c) != 0 {
		t.Errorf("Load from the listing made calls: %v", c)
	}
	if read.Answer != l.Answer || read.Location != "file:/data/ev" || read.Type != catalog.TableTypeExternal ||
		read.ID != l.ID || read.Etag == "" || read.Etag != srv.Table("d", "ev").Parameters[KeyDDLTime] ||
		read.UpdatedTime != l.UpdatedAt || read.LastCommitVersion != nil {
		t.Errorf("Load from the listing: %+v", read.Record)
	}
	srv.Edit("d", "ev", map[string]string{"owner.team": "x"})
	fresh, err := k.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls(); c["get_table_req"] != 1 || len(c) != 1 {
		t.Errorf("Load(nil) made calls %v, want one get_table_req", c)
	}
	if fresh.Etag == read.Etag || fresh.UpdatedTime == read.UpdatedTime {
		t.Errorf("Load(nil) read the record as listed (etag %s), not as it is now", fresh.Etag)
	}

	p := sparkRegistered("d", "p", "file:/w/d.db", "file:/data/p")
	p.Parameters[KeyProvider] = "parquet"
	srv.Put(p)
	_, err = k.Load(ctx, catalog.TableName{Catalog: "hive", Schema: "d", Table: "p"}, nil)
	if !errors.Is(err, catalog.ErrNotDelta) || err.Error() != "not a Delta table: provider parquet is not Delta" {
		t.Errorf("Load of a Parquet table: %v, want catalog.ErrNotDelta: not a Delta table: provider parquet is not Delta", err)
	}
	srv.Edit("d", "ev", map[string]string{KeyLastUpdateVersion: "three"})
	_, err = k.Load(ctx, evName, nil)
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), KeyLastUpdateVersion) {
		t.Errorf("Load of a record with version three: %v, want catalog.ErrUnsupported naming the key", err)
	}
	_, err = k.Load(ctx, catalog.TableName{Catalog: "hive", Schema: "d", Table: "gone"}, nil)
	if !errors.Is(err, catalog.ErrNotFound) || !errors.Is(err, ErrNotFound) {
		t.Errorf("Load of a missing table: %v, want catalog.ErrNotFound", err)
	}
}

// TestKindCheck: an HMS record stores any log type (AnyType); a log
// property named like a metastore key is unsupported, with today's text;
// with columns: real the HMS columns are compared with the log's schema in
// Hive types (Schema), and a type Hive has no column type for is
// unsupported.
func TestKindCheck(t *testing.T) {
	_, k := fakeKind(t, "4.0.1", KindOptions{})
	ctx := context.Background()
	read, err := k.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logAt(3)
	if c := k.Check(log, read); !c.AnyType || c.Unsupported != nil || c.Schema != "" || c.ReadOnly != "" {
		t.Errorf("Check: %+v, want AnyType only", c)
	}
	log.Configuration = map[string]string{"spark.sql.x": "1", "comment": "c", "numFiles": "2", "delta.appendOnly": "true"}
	want := []string{
		"property comment: a metastore key, not a log property HMS can hold",
		"property numFiles: a metastore key, not a log property HMS can hold",
		"property spark.sql.x: a metastore key, not a log property HMS can hold",
	}
	if c := k.Check(log, read); !slices.Equal(c.Unsupported, want) {
		t.Errorf("Check of metastore keys: %q, want %q", c.Unsupported, want)
	}

	_, realCols := fakeKind(t, "4.0.1", KindOptions{Columns: ColumnsReal})
	read, err = realCols.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := realCols.Check(logAt(3), read)
	if want := "HMS columns (columns: real): (col array<string>), log: (id bigint, name string, extra int)"; c.Schema != want || c.Unsupported != nil {
		t.Errorf("Check with columns: real: %+v, want Schema %q", c, want)
	}
	ntz := logAt(3)
	ntz.SchemaString = `{"type":"struct","fields":[{"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}}]}`
	if c := realCols.Check(ntz, read); len(c.Unsupported) != 1 || !strings.HasPrefix(c.Unsupported[0], `columns: real: schema: field "ts"`) {
		t.Errorf("Check of timestamp_ntz with columns: real: %q", c.Unsupported)
	}
}

// TestKindSendRequests counts what one write costs (Client.WriteChecked):
// on HMS 4 the check of the record's fingerprint, etag and identity that
// lets a saved plan be sent by another process is made on the read
// WriteFrom makes anyway (the torn-read check), so a write costs what
// WriteFrom alone of the same record costs (sync's reconcile write before
// the kind); on HMS 3 the check is made on the read under the lock.
func TestKindSendRequests(t *testing.T) {
	for _, tc := range []struct {
		version string
		send    map[string]int
		// reads is what WriteFrom alone reads of the same record.
		reads int
	}{
		{"4.0.1", map[string]int{"get_table_req": 1, "alter_table_with_environment_context": 1}, 1},
		{"3.0", map[string]int{"get_table_req": 1, "lock": 1, "alter_table_with_environment_context": 1, "unlock": 1}, 1},
	} {
		t.Run(tc.version, func(t *testing.T) {
			srv, k := fakeKind(t, tc.version, KindOptions{})
			ctx := context.Background()
			if _, err := k.c.Version(ctx); err != nil {
				t.Fatal(err)
			}
			read, err := k.Load(ctx, evName, nil)
			if err != nil {
				t.Fatal(err)
			}
			w, err := k.Prepare(read, logAt(3), edited(logAt(3)))
			if err != nil {
				t.Fatal(err)
			}
			srv.Calls()
			if _, err := k.Send(ctx, w); err != nil {
				t.Fatal(err)
			}
			if c := srv.Calls(); !maps.Equal(c, tc.send) {
				t.Errorf("Send made %v, want %v", c, tc.send)
			}
			// WriteFrom alone, of the record as read.
			read, err = k.Load(ctx, evName, nil)
			if err != nil {
				t.Fatal(err)
			}
			next := logAt(4)
			n, err := k.next(read.Answer.(*Table).Thrift, k.desired(next, &read.Record))
			if err != nil {
				t.Fatal(err)
			}
			srv.Calls()
			if _, err := k.c.WriteFrom(ctx, read.Answer.(*Table), n, time.Now(), 0); err != nil {
				t.Fatal(err)
			}
			if c := srv.Calls(); c["get_table_req"] != tc.reads {
				t.Errorf("WriteFrom alone made %v", c)
			}
		})
	}
}

// TestKindRefused: HMS's refusal of a write (an incompatible column type
// under columns: real) answers catalog.ErrRefused and carries today's
// Refusal; nothing is written.
func TestKindRefused(t *testing.T) {
	srv, k := fakeKind(t, "4.0.1", KindOptions{Columns: ColumnsReal})
	tb := srv.Table("d", "ev")
	tb.Sd.Cols = []*hm.FieldSchema{{Name: "id", Type: "date"}, {Name: "name", Type: "string"}, {Name: "extra", Type: "int"}}
	srv.Put(tb)
	ctx := context.Background()
	read, err := k.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.Prepare(read, logAt(3), edited(logAt(3)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Send(ctx, w)
	var rf interface{ CatalogRefusal() catalog.Refusal }
	if !errors.Is(err, catalog.ErrRefused) || !errors.Is(err, ErrRefused) || !errors.As(err, &rf) {
		t.Fatalf("Send of an incompatible column change: %v, want a refusal", err)
	}
	got := rf.CatalogRefusal()
	want := catalog.Refusal{Type: "InvalidOperationException", Operation: "alter_table_with_environment_context",
		Message: "The following columns have types incompatible with the existing columns in their respective positions :\nid"}
	if got != want {
		t.Errorf("refusal %+v, want %+v", got, want)
	}
	if errors.Is(err, catalog.ErrConflict) || errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("a refusal answers another class: %v", err)
	}
	if v := srv.Table("d", "ev").Parameters[KeyLastUpdateVersion]; v != "" {
		t.Errorf("refused write left version %q", v)
	}
}

// TestKindSendRefusesBeforeReading: a write that is not this metastore's
// edit of one of its tables, or whose request is not one, is refused
// before anything is sent or read.
func TestKindSendRefusesBeforeReading(t *testing.T) {
	srv, k := fakeKind(t, "4.0.1", KindOptions{})
	ctx := context.Background()
	read, err := k.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := k.Prepare(read, logAt(3), edited(logAt(3)))
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := json.Marshal(writeRequest{RecordFingerprint: "1", Edit: Edit{Columns: []Column{{Name: "id", Type: "bigint"}}}})
	for name, change := range map[string]func(w *catalog.Write){
		"another kind":      func(w *catalog.Write) { w.Kind = "unity-catalog" },
		"a create":          func(w *catalog.Write) { w.Create = true },
		"another catalog":   func(w *catalog.Write) { w.Table.Catalog = "main" },
		"no table":          func(w *catalog.Write) { w.Table = catalog.TableName{} },
		"an unknown field":  func(w *catalog.Write) { w.Request = json.RawMessage(`{"record_fingerprint":"1","edit":{},"x":1}`) },
		"no fingerprint":    func(w *catalog.Write) { w.Request = json.RawMessage(`{"edit":{"set":{"a":"b"}}}`) },
		"columns not real":  func(w *catalog.Write) { w.Request = cols },
		"not a JSON object": func(w *catalog.Write) { w.Request = json.RawMessage(`[]`) },
	} {
		bad := *w
		change(&bad)
		srv.Calls()
		if _, err := k.Send(ctx, &bad); err == nil || !strings.Contains(err.Error(), "nothing sent") {
			t.Errorf("%s: Send: %v, want nothing sent", name, err)
		}
		if c := srv.Calls(); len(c) != 0 {
			t.Errorf("%s: Send made calls %v", name, c)
		}
	}
}

// TestKindPrepare: the write's request is the edit of the record read —
// every key deltasync owns set to the log's — but for the properties
// diff.ignore_properties names, which stay as stored (a stored one kept,
// a log one not added); a log the record cannot hold (a property named
// like Spark's schema keys) is catalog.ErrUnsupported with today's text.
func TestKindPrepare(t *testing.T) {
	srv, k := fakeKind(t, "4.0.1", KindOptions{IgnoreProperties: []string{"delta.logRetention*", "delta.checkpointInterval"}})
	srv.Edit("d", "ev", map[string]string{"delta.logRetentionDuration": "interval 9 days", "delta.appendOnly": "false"})
	ctx := context.Background()
	read, err := k.Load(ctx, evName, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logAt(3)
	log.Configuration = map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "5", "delta.logRetentionDuration": "interval 1 days"}
	w, err := k.Prepare(read, log, edited(log))
	if err != nil {
		t.Fatal(err)
	}
	var req writeRequest
	if err := json.Unmarshal(w.Request, &req); err != nil {
		t.Fatal(err)
	}
	if req.RecordFingerprint != recordFingerprint(read.Answer.(*Table).Thrift) {
		t.Errorf("record_fingerprint %s, want the record read's", req.RecordFingerprint)
	}
	set, rm := req.Edit.Set, req.Edit.Remove
	switch {
	case set["delta.enableDeletionVectors"] != "true" || set[KeyLastUpdateVersion] != "3" || set[KeySchema] != hookSchema:
		t.Errorf("edit sets %v, want the log's keys", set)
	case set["delta.checkpointInterval"] != "" || set["delta.logRetentionDuration"] != "":
		t.Errorf("edit sets ignored properties: %v", set)
	case !slices.Equal(rm, []string{"delta.appendOnly"}):
		t.Errorf("edit removes %v, want only delta.appendOnly (gone from the log)", rm)
	}

	bad := logAt(3)
	bad.Configuration = map[string]string{KeySchemaNumParts: "2"}
	_, err = k.Prepare(read, bad, edited(bad))
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.HasPrefix(err.Error(), "the metastore record cannot hold the log's state: hms: table hive.d.ev: log property") {
		t.Errorf("Prepare of a log with a schema key: %v, want catalog.ErrUnsupported", err)
	}
}

// TestKindSendLostAnswer: a write whose answer is lost (here the caller's
// context ends while the metastore holds the alter, which it applies
// afterwards) returns its error with the transient_lastDdlTime it set on
// HMS 4 — the value a re-read resolves the outcome with, which the record
// then holds — and "" on HMS 3, where the server sets it.
func TestKindSendLostAnswer(t *testing.T) {
	for _, version := range []string{"4.0.1", "3.0"} {
		t.Run(version, func(t *testing.T) {
			srv, k := fakeKind(t, version, KindOptions{})
			read, err := k.Load(context.Background(), evName, nil)
			if err != nil {
				t.Fatal(err)
			}
			w, err := k.Prepare(read, logAt(3), edited(logAt(3)))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			returned := make(chan struct{})
			srv.BeforeAlter = func(string, string) {
				cancel()
				<-returned // the caller has given up: now the alter is applied
			}
			sent, err := k.Send(ctx, w)
			close(returned)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Send: %v, want the context's end", err)
			}
			if version == "3.0" {
				if sent.Etag != "" {
					t.Errorf("Sent.Etag %q on HMS 3, want \"\"", sent.Etag)
				}
				return
			}
			if sent.Etag == "" || sent.Etag == read.Etag {
				t.Fatalf("Sent.Etag %q with the lost answer, want the value the write sets (read %s)", sent.Etag, read.Etag)
			}
			deadline := time.Now().Add(10 * time.Second)
			for srv.Table("d", "ev").Parameters[KeyDDLTime] != sent.Etag && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond) // the held alter is applied once released
			}
			if got := srv.Table("d", "ev").Parameters[KeyDDLTime]; got != sent.Etag {
				t.Errorf("the record's %s is %s after the write, not the %s Send returned", KeyDDLTime, got, sent.Etag)
			}
		})
	}
}

// TestKindRegisterTakenMeanwhile: a name another registrar creates between
// the registration and its create_table answers catalog.ErrAlreadyExists
// naming where that table is (the caller tells its own registration from
// another's by it); a log the record cannot hold is no registration.
func TestKindRegisterTakenMeanwhile(t *testing.T) {
	srv, k := fakeKind(t, "4.0.1", KindOptions{})
	ctx := context.Background()
	if err := k.c.CreateDatabase(ctx, "r", "file:/w/r.db"); err != nil {
		t.Fatal(err)
	}
	name := catalog.TableName{Catalog: "hive", Schema: "r", Table: "reg"}
	w, err := k.Registration(name, "file:/data/reg", logAt(4))
	if err != nil {
		t.Fatal(err)
	}
	srv.BeforeCreate = func(db, table string) {
		srv.Put(sparkRegistered(db, table, "file:/w/r.db", "file:/data/other"))
	}
	_, err = k.Register(ctx, w)
	if !errors.Is(err, catalog.ErrAlreadyExists) || !strings.Contains(err.Error(), "create_table") {
		t.Errorf("Register of a name taken meanwhile: %v", err)
	}
	for why, log := range map[string]catalog.LogState{
		"a schema that cannot be read": func() catalog.LogState { l := logAt(4); l.SchemaString = "{"; return l }(),
		"UniForm Iceberg": func() catalog.LogState {
			l := logAt(4)
			l.Configuration = map[string]string{"delta.universalFormat.enabledFormats": "iceberg"}
			return l
		}(),
	} {
		if w, err := k.Registration(name, "file:/data/reg", log); err == nil || !strings.HasPrefix(err.Error(), "registering hive.r.reg: ") {
			t.Errorf("Registration of %s: %+v, %v; want an error naming the table", why, w, err)
		}
	}
}
