package uc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testenv"
)

// listTables lists main.s with c and returns how many tables it saw.
func listTables(c *Client) (int, error) {
	n := 0
	err := c.ListTablesPages(context.Background(), "main", "s", func(p []TableInfo) error { n += len(p); return nil })
	return n, err
}

// TestListEndlessPageTokens: a server that hands out a new page token on
// every page (empty pages, or full ones) is given up after the page bound
// derived from MaxListEntries, with an error naming the schema and the
// bound. (Before the bound it ran until killed: 3,215 requests in 150 s.)
func TestListEndlessPageTokens(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%t", full), func(t *testing.T) {
			var requests atomic.Int64
			ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				n := requests.Add(1)
				if n > 10_000 { // the old client never stops: end the test instead of hanging
					writeJSON(w, 200, `{"tables":[]}`)
					return
				}
				var b strings.Builder
				b.WriteString(`{"tables":[`)
				for i := 0; full && i < 50; i++ {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"name":"t%d_%d"}`, n, i)
				}
				fmt.Fprintf(&b, `],"next_page_token":"tok%d"}`, n)
				writeJSON(w, 200, b.String())
			})
			c := newClient(t, ts.URL, Options{MaxListEntries: 500})
			_, err := listTables(c)
			got := requests.Load()
			t.Logf("%d requests: %v", got, err)
			if !errors.Is(err, ErrListBound) {
				t.Fatalf("after %d requests: err = %v, want ErrListBound", got, err)
			}
			for _, want := range []string{"listTables", "main.s", "500"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if got > 22 { // 2 × 500/50 pages and 2 (short pages allowed)
				t.Errorf("%d requests, want at most 22", got)
			}
			if Retryable(err) {
				t.Errorf("a listing bound is retryable: %v", err)
			}
		})
	}
}

// TestListDefaultPageBound: without MaxListEntries the bound is 100,000
// entries, so an endless listing of empty pages stops after 4,002 pages
// (2 × 100,000/50 + 2: one short page allowed for every full one).
func TestListDefaultPageBound(t *testing.T) {
	if testing.Short() {
		t.Skip("4,002 requests")
	}
	var requests atomic.Int64
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		n := requests.Add(1)
		if n > 10_000 {
			writeJSON(w, 200, `{"catalogs":[]}`)
			return
		}
		writeJSON(w, 200, `{"catalogs":[],"next_page_token":"c`+strconv.FormatInt(n, 10)+`"}`)
	})
	c := newClient(t, ts.URL, Options{})
	_, err := c.ListCatalogs(context.Background())
	if !errors.Is(err, ErrListBound) || requests.Load() != 4002 {
		t.Fatalf("%d requests, err %v; want ErrListBound after 4002", requests.Load(), err)
	}
}

// TestListOversizedPageToken: a token longer than any real one is refused
// (the seen set and the next URL would hold it).
func TestListOversizedPageToken(t *testing.T) {
	tok := strings.Repeat("x", 64<<10)
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, 200, `{"schemas":[],"next_page_token":"`+tok+`"}`)
	})
	c := newClient(t, ts.URL, Options{})
	if _, err := c.ListSchemas(context.Background(), "main"); !errors.Is(err, ErrListBound) || !strings.Contains(err.Error(), "main") {
		t.Fatalf("err = %v, want ErrListBound naming main", err)
	}
	if n := len(ts.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// hugePage streams a listTables page of n small entries without
// allocating per entry, and reports how many bytes the client took.
func hugePage(n int, written *atomic.Int64) func(http.ResponseWriter, *http.Request, []byte) {
	entry := []byte(`{"name":"t","catalog_name":"main","schema_name":"s"},`)
	chunk := bytes.Repeat(entry, 1000)
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		m, _ := w.Write([]byte(`{"tables":[`))
		written.Add(int64(m))
		for i := 0; i+1000 <= n; i += 1000 {
			m, err := w.Write(chunk)
			written.Add(int64(m))
			if err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`{"name":"last"}]}`))
	}
}

// TestListPageFarOverMaxResults: a page of 1,000,000 entries (the client
// asked for 50) is refused as soon as its 51st entry arrives, without
// reading or decoding the rest: it cost 1.0 GB before.
func TestListPageFarOverMaxResults(t *testing.T) {
	var written atomic.Int64
	ts := newTestServer(t, hugePage(1_000_000, &written))
	c := newClient(t, ts.URL, Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := listTables(c)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("listed %d, %d B allocated, server wrote %d B: %v", n, alloc, written.Load(), err)
	if !errors.Is(err, ErrListBound) || !strings.Contains(err.Error(), "50") || !strings.Contains(err.Error(), "main.s") {
		t.Fatalf("err = %v, want ErrListBound naming main.s and max_results 50", err)
	}
	if n != 0 {
		t.Errorf("%d tables handed out from a refused page", n)
	}
	if alloc > 8<<20 {
		t.Errorf("refusing the page allocated %d B, want < 8 MiB", alloc)
	}
}

// TestListPageBodyCap: a page body over MaxListPageBytes is refused, with
// or without a Content-Length, having read at most the cap.
func TestListPageBodyCap(t *testing.T) {
	big := []byte(`{"tables":[{"name":"t","comment":"` + strings.Repeat("x", 16<<20) + `"}]}`)
	for _, announce := range []bool{true, false} {
		t.Run(fmt.Sprintf("content-length=%t", announce), func(t *testing.T) {
			ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
				if announce {
					w.Header().Set("Content-Length", strconv.Itoa(len(big)))
				}
				w.WriteHeader(200)
				for b := big; len(b) > 0; b = b[min(len(b), 32<<10):] {
					if _, err := w.Write(b[:min(len(b), 32<<10)]); err != nil {
						return
					}
				}
			})
			c := newClient(t, ts.URL, Options{MaxListPageBytes: 1 << 20})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := listTables(c)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d B allocated: %v", alloc, err)
			if !errors.Is(err, ErrListBound) || !strings.Contains(err.Error(), "1048576") || !strings.Contains(err.Error(), "main.s") {
				t.Fatalf("err = %v, want ErrListBound naming main.s and the 1048576 B cap", err)
			}
			if alloc > 4<<20 {
				t.Errorf("refusing a 16 MiB page over a 1 MiB cap allocated %d B", alloc)
			}
		})
	}
}

// TestListErrorEnvelopeIn200: a 200 whose body is an error envelope (the
// classic one the real server sends for a listing, or the Delta one), or
// not a list page at all, is an error, not an empty listing.
func TestListErrorEnvelopeIn200(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		// UC 0.6.0's answer to listTables in a missing schema (HTTP 404 there;
		// TestListErrorEnvelopeOfTheRealServer replays the live one)
		{`{"error_code":"SCHEMA_NOT_FOUND","details":[{"reason":"SCHEMA_NOT_FOUND","@type":"google.rpc.ErrorInfo"}],"message":"Schema not found: main.s"}`, "SCHEMA_NOT_FOUND"},
		{`{"error":{"message":"throttled","type":"TooManyRequestsException","code":429}}`, "TooManyRequestsException"},
		{`{"tables":[],"error_code":"INTERNAL","message":"partial listing"}`, "INTERNAL"},
		{`null`, "not a JSON object"},
		{`[]`, "not a JSON object"},
		{``, "not a JSON object"},
	} {
		ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, tc.body) })
		c := newClient(t, ts.URL, Options{})
		n, err := listTables(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "main.s") {
			t.Errorf("200 %s: %d tables, err %v; want an error naming main.s and %q", tc.body, n, err, tc.want)
		}
		if Retryable(err) {
			t.Errorf("200 %s: retryable: %v", tc.body, err)
		}
	}
	// An empty listing is still fine: {} (fields omitted) and an empty array.
	for _, body := range []string{`{}`, `{"tables":[],"next_page_token":null}`, `{"tables":null}`} {
		ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, body) })
		if n, err := listTables(newClient(t, ts.URL, Options{})); err != nil || n != 0 {
			t.Errorf("200 %s: %d tables, err %v; want an empty listing", body, n, err)
		}
	}
}

// TestListErrorEnvelopeOfTheRealServer replays the real server's error
// envelopes for listings (listTables and listSchemas in a missing catalog,
// 404 there) with status 200: each is an error of the same type, not an
// empty listing, so the detection matches what the server really sends.
func TestListErrorEnvelopeOfTheRealServer(t *testing.T) {
	base := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC, "DELTASYNC_UC_URL not set: no real Unity Catalog server (see .ci/setup-uc.sh)")
	missing := fmt.Sprintf("deltasync_no_such_catalog_%d", time.Now().UnixNano())
	for _, tc := range []struct {
		path string
		list func(*Client) error
	}{
		{"/tables?catalog_name=" + missing + "&schema_name=s", func(c *Client) error { _, err := listTables(c); return err }},
		{"/schemas?catalog_name=" + missing, func(c *Client) error { _, err := c.ListSchemas(context.Background(), "main"); return err }},
	} {
		resp, err := http.Get(strings.TrimRight(base, "/") + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		live, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := parseAPIError(resp.StatusCode, live)
		if resp.StatusCode != 404 || want.Type == "" {
			t.Fatalf("GET %s: %d %s, want a 404 envelope", tc.path, resp.StatusCode, live)
		}
		ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, string(live)) })
		err = tc.list(newClient(t, ts.URL, Options{}))
		var ae *APIError
		if !errors.As(err, &ae) || ae.Type != want.Type || ae.Status != 200 {
			t.Errorf("the live envelope %s in a 200: err %v, want an APIError %s", live, err, want.Type)
		}
	}
}

// BenchmarkReadPage: reading a listTables page as it arrives, counting
// its entries and dropping its columns in one pass (compare
// BenchmarkListPageDecode/dropColumns+json, and readPage+json, the whole
// cost of one page before the bounds).
func BenchmarkReadPage(b *testing.B) {
	page := benchTablesPage()
	lim := &pageLimit{entries: 50, bytes: 32 << 20, dropColumns: true}
	b.Run("readPage", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := readPage(bytes.NewReader(page), int64(len(page)), lim); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("readPage+json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			body, err := readPage(bytes.NewReader(page), int64(len(page)), lim)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := decodePage("listTables", body, func(p *listPage[listedTable]) []listedTable { return p.Tables }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestListWithShortPagesEnds: a server may answer a page with fewer
// entries than asked for, or none, and a token (Databricks documents it
// for listTables). A listing of 450 tables where every full page is
// followed by an empty one is not an endless listing under a bound of 500
// entries: all 450 tables are listed.
func TestListWithShortPagesEnds(t *testing.T) {
	var requests atomic.Int64
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		n := int(requests.Add(1))
		var b strings.Builder
		b.WriteString(`{"tables":[`)
		if n%2 == 1 { // odd pages full, even pages empty
			for i := range 50 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"t%d_%d"}`, n, i)
			}
		}
		b.WriteString(`]`)
		if n < 18 { // 9 full pages, 9 empty ones
			fmt.Fprintf(&b, `,"next_page_token":"tok%d"`, n)
		}
		b.WriteString(`}`)
		writeJSON(w, 200, b.String())
	})
	c := newClient(t, ts.URL, Options{MaxListEntries: 500})
	got, err := listTables(c)
	if err != nil || got != 450 {
		t.Fatalf("listed %d tables in %d pages: %v, want 450 and no error", got, requests.Load(), err)
	}
}
