package sync

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

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/internal/fakehms"
)

// listEnv is a fake HMS 4 with databases of Delta tables t0000, t0001, …
// and the HMS kind of a reconciler selecting them all, its client timing
// out after timeout.
func listEnv(t *testing.T, timeout time.Duration, tables map[string]int) (*fakehms.Server, *hmsKind) {
	t.Helper()
	srv := fakehms.New(t, "4.0.1")
	for db, n := range tables {
		for i := range n {
			tb := hm.NewTable()
			tb.DbName, tb.TableName, tb.TableType = db, fmt.Sprintf("t%04d", i), "EXTERNAL_TABLE"
			tb.Parameters = map[string]string{hms.KeyProvider: "delta"}
			srv.Put(tb)
		}
	}
	c, err := hms.New(srv.URL, hms.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sel, err := NewSelector([]Rule{{Include: []string{"hive.*.*"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{HMS: &HMSOptions{Client: c}, Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return srv, r.kind.(turnKind).catalogKind.(*hmsKind)
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

// TestHMSListTwoReadsInFlight: the listing keeps two batch reads in
// flight, never more, and still emits the tables in their sorted order,
// with ceil(N/100) reads. The fake holds the first read until a second
// arrives (5 s at most: with reads one at a time it never does), and every
// read 20 ms longer, in which a third read would arrive if one were sent.
func TestHMSListTwoReadsInFlight(t *testing.T) {
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
	var got []string
	err := k.list(context.Background(), func(t Target, why string) bool {
		if why != "" {
			panic(why)
		}
		got = append(got, t.Name.String())
		return true
	}, errors.New("stop"))
	if err != nil {
		t.Fatal(err)
	}
	if want := tableNames("d", 0, n); !slices.Equal(got, want) {
		t.Errorf("emitted %d tables, not the %d in sorted order (first %v)", len(got), len(want), got[:min(3, len(got))])
	}
	if c := srv.Calls()["get_table_objects_by_name_req"]; c != (n+hmsBatch-1)/hmsBatch {
		t.Errorf("%d batch reads for %d tables, want %d", c, n, (n+hmsBatch-1)/hmsBatch)
	}
	if most != hmsReadsInFlight {
		t.Errorf("at most %d batch reads in flight at once, want %d", most, hmsReadsInFlight)
	}
	if g := batchReaders(); g != 0 {
		t.Errorf("%d batch reads outlived the listing", g)
	}
}

// TestHMSListStops: when emit stops, or ctx ends, with the next batch's
// read held by the server, the listing returns at once (the read is
// cancelled, well inside the client's minute), leaves no read running,
// and emits nothing past where it stopped. A read the server fails ends its
// database's listing with an error naming the database, after the tables
// of the batches before it and none after; the other databases are
// listed whole.
func TestHMSListStops(t *testing.T) {
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
			stop := errors.New("stop")
			var got []string
			start := time.Now()
			err := k.list(ctx, func(t Target, _ string) bool {
				got = append(got, t.Name.String())
				if len(got) == 150 {
					if tc.cancel {
						cancel()
						return true
					}
					return false
				}
				return true
			}, stop)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the listing took %s to stop", d)
			}
			want := tableNames("d", 0, 150)
			if tc.cancel {
				want = tableNames("d", 0, 200) // the batch in hand is handed over whole, as before
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "reading tables of hive.d") {
					t.Errorf("list after ctx ended: %v, want context.Canceled reading hive.d", err)
				}
			} else if !errors.Is(err, stop) {
				t.Errorf("list after emit stopped: %v, want stop", err)
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
		var got []string
		err := k.list(context.Background(), func(t Target, _ string) bool {
			got = append(got, t.Name.String())
			return true
		}, errors.New("stop"))
		if err == nil || !strings.Contains(err.Error(), "reading tables of hive.a") || strings.Contains(err.Error(), "hive.b") {
			t.Errorf("list: %v, want one error, reading hive.a", err)
		}
		if want := append(tableNames("a", 0, 300), tableNames("b", 0, 250)...); !slices.Equal(got, want) {
			t.Errorf("emitted %d tables, want a's first 300 and all of b's (250)", len(got))
		}
		if g := batchReaders(); g != 0 {
			t.Errorf("%d batch reads outlived the listing", g)
		}
	})
}
