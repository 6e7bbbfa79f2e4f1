package hms

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/internal/fakehms"
)

// scope is a catalog.Scope for tests: catalogs (nil: all), and the
// schemas and tables it wants (nil: all).
type scope struct {
	catalogs []string
	schema   func(string) bool
	wants    func(catalog.TableName) bool
}

func (s scope) Catalogs() ([]string, bool) { return s.catalogs, s.catalogs == nil }

func (s scope) MayMatchSchema(_, schema string) bool { return s.schema == nil || s.schema(schema) }

func (s scope) Wants(n catalog.TableName) bool { return s.wants == nil || s.wants(n) }

// listEnv is a fake HMS 4 with databases of Delta tables t0000, t0001, …
// and the Kind of it, its client timing out after timeout.
func listEnv(t *testing.T, timeout time.Duration, tables map[string]int) (*fakehms.Server, *Kind) {
	t.Helper()
	srv := fakehms.New(t, "4.0.1")
	for db, n := range tables {
		for i := range n {
			tb := hm.NewTable()
			tb.DbName, tb.TableName, tb.TableType = db, fmt.Sprintf("t%04d", i), "EXTERNAL_TABLE"
			tb.Parameters = map[string]string{KeyProvider: "delta"}
			srv.Put(tb)
		}
	}
	c, err := New(srv.URL, Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return srv, NewKind(c, KindOptions{})
}

func tableNames(db string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("hive.%s.t%04d", db, i))
	}
	return out
}

// batchReaders names the goroutines still running a batch read of
// readBatches': none may outlive it.
func batchReaders() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "readBatches.func") {
			n++
		}
	}
	return n
}

// collect lists k under s and returns the names emitted.
func collect(t *testing.T, k *Kind, s catalog.Scope) ([]catalog.Listed, error) {
	t.Helper()
	var got []catalog.Listed
	err := k.List(context.Background(), s, func(l catalog.Listed) bool {
		got = append(got, l)
		return true
	})
	return got, err
}

func names(ls []catalog.Listed) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name.String()
	}
	return out
}

// TestKindListTwoReadsInFlight: the listing keeps two batch reads in
// flight, never more, and still emits the tables in their sorted order,
// with ceil(N/100) reads. The fake holds the first read until a second
// arrives (5 s at most: with reads one at a time it never does), and every
// read 20 ms longer, in which a third read would arrive if one were sent.
func TestKindListTwoReadsInFlight(t *testing.T) {
	const n = 1050 // 11 reads, the last of 50
	srv, k := listEnv(t, time.Minute, map[string]int{"d": n})
	var mu gosync.Mutex
	inFlight, most, reads := 0, 0, 0
	second := make(chan struct{})
	srv.BeforeGetTables = func(string, []string) error {
		mu.Lock()
		inFlight++
		reads++
		first := reads == 1
		most = max(most, inFlight)
		if inFlight == 2 && reads == 2 {
			close(second)
		}
		mu.Unlock()
		if first {
			select {
			case <-second:
			case <-time.After(5 * time.Second):
			}
		}
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return nil
	}
	srv.Calls()
	got, err := collect(t, k, scope{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range got {
		if l.NotDelta != "" {
			t.Fatalf("%s listed as not Delta: %s", l.Name, l.NotDelta)
		}
	}
	if want := tableNames("d", 0, n); !slices.Equal(names(got), want) {
		t.Errorf("emitted %d tables, not the %d in sorted order (first %v)", len(got), len(want), names(got)[:min(3, len(got))])
	}
	if c := srv.Calls()["get_table_objects_by_name_req"]; c != (n+listBatch-1)/listBatch {
		t.Errorf("%d batch reads for %d tables, want %d", c, n, (n+listBatch-1)/listBatch)
	}
	if most != readsInFlight {
		t.Errorf("at most %d batch reads in flight at once, want %d", most, readsInFlight)
	}
	if g := batchReaders(); g != 0 {
		t.Errorf("%d batch reads outlived the listing", g)
	}
}

// TestKindListStops: when emit stops, or ctx ends, with the next batch's
// read held by the server, the listing returns at once (the read is
// cancelled, well inside the client's minute), leaves no read running,
// and emits nothing past where it stopped. A read the server fails ends its
// database's listing with an error naming the database, after the tables
// of the batches before it and none after; the other databases are
// listed whole.
func TestKindListStops(t *testing.T) {
	held := func(t *testing.T, srv *fakehms.Server, db string, from int) {
		release := make(chan struct{})
		t.Cleanup(func() { close(release) }) // before the fake stops: it waits for this handler
		srv.BeforeGetTables = func(d string, names []string) error {
			if d == db && names[0] >= fmt.Sprintf("t%04d", from) {
				<-release
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name   string
		cancel bool
	}{{"emit stops", false}, {"ctx ends", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, k := listEnv(t, time.Minute, map[string]int{"d": 500})
			held(t, srv, "d", 200) // the third batch's read, in flight while the second is emitted
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			start := time.Now()
			err := k.List(ctx, scope{}, func(l catalog.Listed) bool {
				got = append(got, l.Name.String())
				if len(got) == 150 {
					if tc.cancel {
						cancel()
						return true
					}
					return false
				}
				return true
			})
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the listing took %s to stop", d)
			}
			want := tableNames("d", 0, 150)
			if tc.cancel {
				want = tableNames("d", 0, 200) // the batch in hand is handed over whole, as before
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "reading tables of hive.d") {
					t.Errorf("List after ctx ended: %v, want context.Canceled reading hive.d", err)
				}
			} else if err != nil {
				t.Errorf("List after emit stopped: %v, want nil", err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("emitted %d tables, want the first %d", len(got), len(want))
			}
			if g := batchReaders(); g != 0 {
				t.Errorf("%d batch reads outlived the listing", g)
			}
		})
	}
	t.Run("read fails", func(t *testing.T) {
		srv, k := listEnv(t, time.Minute, map[string]int{"a": 500, "b": 250})
		srv.BeforeGetTables = func(db string, names []string) error {
			if db == "a" && names[0] == "t0300" { // a's fourth batch
				return errors.New("the server fails it")
			}
			return nil
		}
		got, err := collect(t, k, scope{})
		if err == nil || !strings.Contains(err.Error(), "reading tables of hive.a") || strings.Contains(err.Error(), "hive.b") {
			t.Errorf("List: %v, want one error, reading hive.a", err)
		}
		if want := append(tableNames("a", 0, 300), tableNames("b", 0, 250)...); !slices.Equal(names(got), want) {
			t.Errorf("emitted %d tables, want a's first 300 and all of b's (250)", len(got))
		}
		if g := batchReaders(); g != 0 {
			t.Errorf("%d batch reads outlived the listing", g)
		}
	})
}

// TestKindListScope: only the catalog named KindOptions.Name is listed
// (another catalog costs no call), a schema scope cannot match is not
// listed, and a table scope does not want is not read: the batch reads
// ask for the wanted tables only. A table that is not Delta is emitted
// with today's reason; a Delta table with its type, id, location, comment,
// fingerprint and the record itself.
func TestKindListScope(t *testing.T) {
	srv, k := listEnv(t, time.Minute, map[string]int{"a": 250, "b": 3})
	parquet := hm.NewTable()
	parquet.DbName, parquet.TableName, parquet.TableType = "a", "p", "EXTERNAL_TABLE"
	parquet.Parameters = map[string]string{KeyProvider: "parquet"}
	srv.Put(parquet)
	hive := hm.NewTable()
	hive.DbName, hive.TableName, hive.TableType = "a", "h", "MANAGED_TABLE"
	hive.Parameters = map[string]string{}
	hive.Sd = &hm.StorageDescriptor{Location: "file:/warehouse/a.db/h"}
	srv.Put(hive)
	srv.Edit("a", "t0007", map[string]string{KeyComment: "seven"})
	sd := hm.NewStorageDescriptor()
	sd.SerdeInfo = &hm.SerDeInfo{Parameters: map[string]string{SerdePath: "s3://b/a/t0007"}}
	tb := srv.Table("a", "t0007")
	tb.Sd, tb.CreateTime = sd, 1234
	srv.Put(tb)

	srv.Calls()
	if got, err := collect(t, k, scope{catalogs: []string{"main"}}); err != nil || len(got) != 0 {
		t.Errorf("listing catalog main: %d tables, %v; want none", len(got), err)
	}
	if c := srv.Calls(); len(c) != 0 {
		t.Errorf("listing another catalog made calls: %v", c)
	}

	var asked []string
	var mu gosync.Mutex
	srv.BeforeGetTables = func(_ string, names []string) error {
		mu.Lock()
		asked = append(asked, names...)
		mu.Unlock()
		return nil
	}
	got, err := collect(t, k, scope{catalogs: []string{"HIVE"}, schema: func(s string) bool { return s == "a" },
		wants: func(n catalog.TableName) bool { return n.Table < "t0002" || n.Table == "t0007" }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hive.a.h", "hive.a.p", "hive.a.t0000", "hive.a.t0001", "hive.a.t0007"}; !slices.Equal(names(got), want) {
		t.Fatalf("listed %v, want %v", names(got), want)
	}
	if want := []string{"h", "p", "t0000", "t0001", "t0007"}; !slices.Equal(asked, want) {
		t.Errorf("batch reads asked for %v, want only the wanted tables %v", asked, want)
	}
	if r := got[0].NotDelta; r != "table type MANAGED_TABLE without spark.sql.sources.provider=delta is not a Delta table" {
		t.Errorf("hive.a.h NotDelta %q", r)
	}
	if got[0].Location != "file:/warehouse/a.db/h" {
		t.Errorf("hive.a.h Location %q, want its sd.location", got[0].Location)
	}
	if r := got[1].NotDelta; r != "provider parquet is not Delta" {
		t.Errorf("hive.a.p NotDelta %q", r)
	}
	l := got[4]
	ans, _ := l.Answer.(*Table)
	switch {
	case l.NotDelta != "" || l.Type != catalog.TableTypeExternal || l.ID != "hive.a.t0007@1234" || l.Location != "s3://b/a/t0007" || l.Comment != "seven":
		t.Errorf("hive.a.t0007 listed as %+v", l)
	case ans == nil || ans.Thrift.TableName != "t0007":
		t.Errorf("hive.a.t0007's Answer %#v, want its record", l.Answer)
	case l.UpdatedAt != fingerprint(ans.Thrift) || l.UpdatedAt == got[3].UpdatedAt:
		t.Errorf("hive.a.t0007 UpdatedAt %d, want its fingerprint (t0001's is %d)", l.UpdatedAt, got[3].UpdatedAt)
	}
}

// TestFingerprint: the record's fingerprint moves with every parameter,
// the table type, a column and a serde parameter, whether or not
// transient_lastDdlTime moved; it is never 0.
func TestFingerprint(t *testing.T) {
	base := sparkRegistered("d", "t", "file:/w/d.db", "file:/data/t")
	f0 := fingerprint(base)
	if f0 == 0 {
		t.Fatal("fingerprint 0")
	}
	for name, edit := range map[string]func(*hm.Table){
		"parameter":       func(t *hm.Table) { t.Parameters["owner.team"] = "x" },
		"parameter value": func(t *hm.Table) { t.Parameters["spark.sql.create.version"] = "4.2.1" },
		"table type":      func(t *hm.Table) { t.TableType = "MANAGED_TABLE" },
		"column":          func(t *hm.Table) { t.Sd.Cols[0].Comment = "" },
		"serde path":      func(t *hm.Table) { t.Sd.SerdeInfo.Parameters[SerdePath] = "file:/data/u" },
	} {
		n := cloneTable(base)
		n.Sd.Cols = []*hm.FieldSchema{{Name: "col", Type: "array<string>", Comment: "from deserializer"}}
		edit(n)
		if fingerprint(n) == f0 {
			t.Errorf("%s changed, fingerprint did not", name)
		}
	}
	if same := cloneTable(base); fingerprint(same) != f0 {
		t.Error("a copy's fingerprint differs")
	}
}
