package uc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var dropColumnsSeeds = []string{
	`{"tables":[{"name":"t","catalog_name":"c","schema_name":"s","columns":[{"name":"a","type_json":"{\"name\":\"a\",\"type\":\"long\",\"metadata\":{\"comment\":\"x]}\\\\\"\"}}"}],"comment":"c","updated_at":5}],"next_page_token":"t"}`,
	`{"tables":[{"columns" : [ [1,[2]] , {"x":"]"} ] ,"name":"t","properties":{"columns":"[not an array]","a\"columns":"v"}}]}`,
	`{"tables":[{"name":"t","comment":"\"columns\":[1,2]","columns":[]},{"name":"u","columns":null}]}`,
	`{"columns":[1],"tables":[{"name":"t","view_dependencies":{"columns":[{"name":"keep"}]}}]}`,
	`{"tables":[{"name":"t","columns":[{"name":"a"`,
	`{"tables":[{"name":"t\\","columns":[{"name":"\\\"]"}]}]}`,
}

// TestDropColumnsKeepsEverythingElse: decoding a page with the columns
// dropped gives the same tables, columns aside, as decoding all of it.
func TestDropColumnsKeepsEverythingElse(t *testing.T) {
	for _, s := range dropColumnsSeeds {
		checkDropColumns(t, []byte(s))
	}
	if got := string(dropColumns([]byte(dropColumnsSeeds[0]))); strings.Contains(got, "type_json") {
		t.Errorf("columns not dropped: %s", got)
	}
}

func FuzzDropColumns(f *testing.F) {
	for _, s := range dropColumnsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDropColumns(t, b) })
}

func checkDropColumns(t *testing.T, b []byte) {
	t.Helper()
	type page struct {
		Tables        []TableInfo `json:"tables"`
		NextPageToken *string     `json:"next_page_token"`
	}
	var full page
	if json.Unmarshal(b, &full) != nil {
		return // dropColumns leaves what json rejects for json to report
	}
	for i := range full.Tables {
		full.Tables[i].Columns = nil
	}
	stripped := dropColumns(b)
	var got page
	if err := json.Unmarshal(stripped, &got); err != nil {
		t.Fatalf("%s\n-> %s\n%v", b, stripped, err)
	}
	for i := range got.Tables {
		if len(got.Tables[i].Columns) != 0 && string(stripped) != string(b) {
			t.Errorf("table %d kept columns: %s", i, stripped)
		}
		got.Tables[i].Columns = nil
	}
	if diff := cmp.Diff(full, got); diff != "" {
		t.Errorf("%s\n-> %s\n(-all +dropped):\n%s", b, stripped, diff)
	}
}

// TestListTablesPagesSkipsColumns: the pages handed out carry every field
// but the columns.
func TestListTablesPagesSkipsColumns(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Query().Get("page_token") == "" {
			writeJSON(w, 200, `{"tables":[{"name":"a","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","updated_at":7,
				"storage_location":"s3://b/a","comment":"hi","table_id":"id-a","columns":[{"name":"x","type_json":"{}"}]}],"next_page_token":"p2"}`)
			return
		}
		writeJSON(w, 200, `{"tables":[{"name":"b","catalog_name":"c","schema_name":"s","columns":[]}]}`)
	})
	c := newClient(t, ts.URL, Options{})
	var pages [][]TableInfo
	err := c.ListTablesPages(context.Background(), "c", "s", func(p []TableInfo) error {
		pages = append(pages, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]TableInfo{
		{{Name: "a", CatalogName: "c", SchemaName: "s", TableType: "EXTERNAL", UpdatedAt: 7, StorageLocation: "s3://b/a", Comment: "hi", TableID: "id-a"}},
		{{Name: "b", CatalogName: "c", SchemaName: "s"}},
	}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

func BenchmarkListPageDecode(b *testing.B) {
	page := benchTablesPage()
	type pg struct {
		Tables []listedTable `json:"tables"`
	}
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			var p pg
			if err := json.Unmarshal(page, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dropColumns+json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			var p pg
			if err := json.Unmarshal(dropColumns(page), &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestListTablesPagesReadsPageOnce bounds what listing a page costs the
// client in allocated bytes, relative to the page: reading the body and
// the decoded tables, without a validating copy of the whole page on the
// way (which Client.do used to make for every list page: ~1x the page).
func TestListTablesPagesReadsPageOnce(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"tables":[`)
	for i := range 50 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"name":"t%d","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","updated_at":7,"storage_location":"s3://b/t%d","table_id":"id-%d","columns":[`, i, i, i)
		for j := range 40 {
			if j > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"name":"column_%d","type_name":"LONG","type_text":"bigint","type_json":"{\"name\":\"column_%d\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}","position":%d,"nullable":true}`, j, j, j)
		}
		sb.WriteString("]}")
	}
	sb.WriteString(`]}`)
	page := sb.String()
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		writeJSON(w, 200, page)
	})
	c := newClient(t, ts.URL, Options{})
	list := func() {
		n := 0
		if err := c.ListTablesPages(context.Background(), "c", "s", func(p []TableInfo) error { n += len(p); return nil }); err != nil || n != 50 {
			t.Fatalf("listed %d tables, err %v; want 50", n, err)
		}
	}
	list() // warm the connection
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const rounds = 20
	for range rounds {
		list()
	}
	runtime.ReadMemStats(&after)
	perPage := float64(after.TotalAlloc-before.TotalAlloc) / rounds
	t.Logf("page of %d B: %.0f B allocated per page (%.2f x)", len(page), perPage, perPage/float64(len(page)))
	if perPage > 2*float64(len(page)) {
		t.Errorf("listing a %d B page allocated %.0f B, want at most 2x the page", len(page), perPage)
	}
}

// benchTablesPage is a listTables page of 50 tables of 30 columns.
func benchTablesPage() []byte {
	var sb strings.Builder
	sb.WriteString(`{"tables":[`)
	for i := range 50 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"name":"t","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","data_source_format":"DELTA","updated_at":1,"columns":[`)
		for c := range 30 {
			if c > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`{"name":"col","type_text":"bigint","type_json":"{\"name\":\"col\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}","type_name":"LONG","position":1,"nullable":true}`)
		}
		sb.WriteString(`],"properties":{"delta.minReaderVersion":"1","delta.minWriterVersion":"2"}}`)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

// TestColumnsClosedByABraceAreRefused: a columns array that a '}' closes
// is not JSON; it is not dropped, so the page is refused, not decoded as
// if its columns were [].
func TestColumnsClosedByABraceAreRefused(t *testing.T) {
	for _, body := range []string{`{"tables":[{"name":"t","columns":[}}]}`, `{"tables":[{"name":"t","columns":[{"name":"a"}}]}`} {
		b, err := readPage(strings.NewReader(body), -1, &pageLimit{entries: 50, bytes: 1 << 20, dropColumns: true})
		if err == nil {
			_, err = decodePage("listTables", b, func(p *listPage[listedTable]) []listedTable { return p.Tables })
		}
		if err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

// TestHugePageByteBoundDoesNotOverflow: MaxListPageBytes near MaxInt64
// is a bound like any other, not a slice capacity out of range.
func TestHugePageByteBoundDoesNotOverflow(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush() // no Content-Length
		_, _ = w.Write([]byte(`{"tables":[{"name":"t"}]}`))
	})
	c := newClient(t, ts.URL, Options{MaxListPageBytes: math.MaxInt64})
	if n, err := listTables(c); err != nil || n != 1 {
		t.Fatalf("listed %d: %v", n, err)
	}
}
