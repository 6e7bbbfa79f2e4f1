package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

const basePath = "/api/2.1/unity-catalog"

// recorded is one request seen by a test server.
type recorded struct {
	Method, Path, Query, Body, Auth, UA string
}

// testServer is a tiny httptest server with a per-test handler that records requests.
type testServer struct {
	*httptest.Server
	mu   stdsync.Mutex
	reqs []recorded
}

func newTestServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body []byte)) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, recorded{r.Method, strings.TrimPrefix(r.URL.EscapedPath(), basePath), r.URL.RawQuery, string(body),
			r.Header.Get("Authorization"), r.Header.Get("User-Agent")})
		ts.mu.Unlock()
		h(w, r, body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) requests() []recorded {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]recorded(nil), ts.reqs...)
}

// noSleep is a retry policy that never really waits and records the delays.
func noSleep(delays *[]time.Duration) RetryPolicy {
	return RetryPolicy{
		MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second,
		Jitter: func(d time.Duration) time.Duration { return d },
		Sleep: func(ctx context.Context, d time.Duration) error {
			if delays != nil {
				*delays = append(*delays, d)
			}
			return ctx.Err()
		},
	}
}

func newClient(t *testing.T, url string, opts Options) *Client {
	t.Helper()
	if opts.Retry.Sleep == nil {
		p := noSleep(nil)
		if opts.Retry.MaxAttempts > 0 {
			p.MaxAttempts = opts.Retry.MaxAttempts
		}
		opts.Retry = p
	}
	c, err := New(url+basePath, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if s, ok := v.(string); ok {
		_, _ = io.WriteString(w, s)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

func TestNewValidatesBaseURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://h/api/2.1/unity-catalog", "http://h/api/2.1", "http:///api/2.1/unity-catalog"} {
		if _, err := New(u, Options{}); err == nil {
			t.Errorf("New(%q): want error", u)
		}
	}
	if _, err := New("http://h:1/api/2.1/unity-catalog/", Options{}); err != nil {
		t.Errorf("trailing slash: %v", err)
	}
	if _, err := New("http://h/api/2.1/unity-catalog", Options{HTTPClient: http.DefaultClient, InsecureSkipVerify: true}); err == nil {
		t.Error("HTTPClient + InsecureSkipVerify: want error")
	}
}

func TestListTablesPaging(t *testing.T) {
	// Three full pages of 50 then an empty last page (a full page always carries a token).
	const total = 150
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		q := r.URL.Query()
		if q.Get("catalog_name") != "main" || q.Get("schema_name") != "sales" {
			writeJSON(w, 400, `{"error_code":"INVALID_ARGUMENT","message":"bad params"}`)
			return
		}
		start := 0
		if tok := q.Get("page_token"); tok != "" {
			start, _ = strconv.Atoi(strings.TrimPrefix(tok, "t"))
			start++
		}
		limit, _ := strconv.Atoi(q.Get("max_results"))
		var tables []TableInfo
		for i := start; i < total && len(tables) < limit; i++ {
			tables = append(tables, TableInfo{Name: fmt.Sprintf("t%03d", i), CatalogName: "main", SchemaName: "sales"})
		}
		resp := map[string]any{"tables": tables}
		if len(tables) == limit {
			resp["next_page_token"] = fmt.Sprintf("t%d", start+len(tables)-1)
		}
		writeJSON(w, 200, resp)
	})
	c := newClient(t, ts.URL, Options{})
	got, err := c.ListTables(context.Background(), "main", "sales")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != total || got[0].Name != "t000" || got[total-1].Name != "t149" {
		t.Fatalf("got %d tables (%v…)", len(got), got[:min(3, len(got))])
	}
	if n := len(ts.requests()); n != 4 {
		t.Errorf("requests = %d, want 4 (3 full pages + empty last page)", n)
	}
	if name := got[5].FullName().String(); name != "main.sales.t005" {
		t.Errorf("FullName = %s", name)
	}
}

func TestListPagingRepeatedToken(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, 200, `{"catalogs":[{"name":"a"}],"next_page_token":"same"}`)
	})
	c := newClient(t, ts.URL, Options{})
	if _, err := c.ListCatalogs(context.Background()); err == nil || !strings.Contains(err.Error(), "repeated page token") {
		t.Fatalf("err = %v", err)
	}
}

func TestListCatalogsAndSchemas(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.URL.Path {
		case basePath + "/catalogs":
			writeJSON(w, 200, `{"catalogs":[{"name":"main","id":"1"},{"name":"dev"}],"next_page_token":null}`)
		case basePath + "/schemas":
			writeJSON(w, 200, `{"schemas":[{"name":"s1","catalog_name":"`+r.URL.Query().Get("catalog_name")+`","full_name":"main.s1"}]}`)
		}
	})
	c := newClient(t, ts.URL, Options{})
	cats, err := c.ListCatalogs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]CatalogInfo{{Name: "main", ID: "1"}, {Name: "dev"}}, cats); diff != "" {
		t.Error(diff)
	}
	schemas, err := c.ListSchemas(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SchemaInfo{{Name: "s1", CatalogName: "main", FullName: "main.s1"}}, schemas); diff != "" {
		t.Error(diff)
	}
}

const loadTableBody = `{"metadata":{"etag":"etag-1700000100000","table-type":"MANAGED","table-uuid":"6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
 "location":"s3://bucket/t","created-time":1700000000000,"updated-time":1700000100000,
 "columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1}},
   {"name":"m","type":{"type":"map","key-type":"string","value-type":"decimal(10,2)","value-contains-null":true},"nullable":true,"metadata":{}}]},
 "partition-columns":["id"],
 "properties":{"delta.feature.catalogManaged":"supported","delta.minReaderVersion":"3","delta.minWriterVersion":"7"},
 "last-commit-version":5,"last-commit-timestamp-ms":1700000100000,"some-future-field":true},
 "commits":[{"version":6,"timestamp":1700000200000,"file-name":"00000000000000000006.uuid.json","file-size":1024,"file-modification-timestamp":1700000200001}],
 "latest-table-version":6}`

func TestLoadTable(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method != http.MethodGet || r.URL.EscapedPath() != basePath+"/delta/v1/catalogs/main/schemas/s%20p/tables/t" {
			writeJSON(w, 404, `{"error":{"message":"no route","type":"NotFoundException","code":404}}`)
			return
		}
		writeJSON(w, 200, loadTableBody)
	})
	c := newClient(t, ts.URL, Options{})
	got, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "main", Schema: "s p", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := &LoadTableResponse{
		Metadata: TableMetadata{
			Etag: "etag-1700000100000", TableType: "MANAGED", TableUUID: "6f0c5b9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", Location: "s3://bucket/t",
			CreatedTime: 1700000000000, UpdatedTime: 1700000100000,
			Columns: catalog.StructType{Fields: []catalog.StructField{
				{Name: "id", Type: catalog.DataType{Primitive: "long"}, Metadata: map[string]any{"delta.columnMapping.id": json.Number("1")}},
				{Name: "m", Nullable: true, Type: catalog.DataType{Map: &catalog.MapType{KeyType: catalog.DataType{Primitive: "string"}, ValueType: catalog.DataType{Primitive: "decimal(10,2)"}, ValueContainsNull: true}}},
			}},
			PartitionColumns:      []string{"id"},
			Properties:            map[string]string{"delta.feature.catalogManaged": "supported", "delta.minReaderVersion": "3", "delta.minWriterVersion": "7"},
			LastCommitVersion:     ptr(int64(5)),
			LastCommitTimestampMs: ptr(int64(1700000100000)),
		},
		Commits:            []Commit{{Version: 6, Timestamp: 1700000200000, FileName: "00000000000000000006.uuid.json", FileSize: 1024, FileModificationTimestamp: 1700000200001}},
		LatestTableVersion: ptr(int64(6)),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got.Metadata.CatalogManaged() {
		t.Error("CatalogManaged = false")
	}
}

func TestLoadTableRejectsIncompleteResponse(t *testing.T) {
	for _, body := range []string{"", "{}", `{"metadata":{"etag":"e","table-type":"EXTERNAL","location":"s3://b/t"}}`} {
		ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, body) })
		c := newClient(t, ts.URL, Options{})
		if _, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err == nil || !strings.Contains(err.Error(), "c.s.t: response lacks metadata.") {
			t.Errorf("body %q: err = %v", body, err)
		}
	}
}

func TestLoadTableErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		check  func(error) bool
	}{
		{"not found", 404, `{"error":{"message":"Table not found: a.b.c","type":"NoSuchTableException","code":404}}`, IsNotFound},
		{"not delta", 400, `{"error":{"message":"Table is not a Delta table","type":"UnsupportedTableFormatException","code":400}}`, IsUnsupportedFormat},
		{"unauthorized classic envelope", 401, `{"error_code":"UNAUTHENTICATED","message":"No authorization found."}`, IsUnauthorized},
		{"forbidden", 403, `{"error":{"message":"denied","type":"PermissionDeniedException","code":403}}`, IsForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, tt.status, tt.body) })
			c := newClient(t, ts.URL, Options{})
			_, err := c.LoadTable(context.Background(), catalog.TableName{Catalog: "a", Schema: "b", Table: "c"})
			if !tt.check(err) {
				t.Fatalf("err = %v", err)
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Operation != "loadTable" || ae.Status != tt.status {
				t.Errorf("APIError = %+v", ae)
			}
			if n := len(ts.requests()); n != 1 {
				t.Errorf("4xx was sent %d times, want 1", n)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		wantErr    error
		notFound   bool
		wantConfig *DeltaConfig
	}{
		{"ok", 200, `{"endpoints":["GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"],"protocol-version":"1.0"}`, nil, false,
			&DeltaConfig{Endpoints: []string{"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"}, ProtocolVersion: "1.0"}},
		{"no delta api (plain 404)", 404, `404 page not found`, ErrNoDeltaAPI, true, nil},
		{"no delta api (generic not found)", 404, `{"error_code":"NOT_FOUND","message":"no such path"}`, ErrNoDeltaAPI, true, nil},
		{"unknown catalog is not ErrNoDeltaAPI", 404, `{"error":{"message":"Catalog not found: x","type":"NoSuchCatalogException","code":404}}`, nil, true, nil},
		{"unknown catalog, classic envelope", 404, `{"error_code":"CATALOG_NOT_FOUND","message":"Catalog not found: x"}`, nil, true, nil},
		{"version not offered", 200, `{"endpoints":[],"protocol-version":"2.0"}`, ErrProtocolVersion, false, nil},
		{"minor above offered", 200, `{"endpoints":[],"protocol-version":"1.3"}`, ErrProtocolVersion, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, tt.status, tt.body) })
			c := newClient(t, ts.URL, Options{})
			got, err := c.Config(context.Background(), "main")
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && tt.notFound && (errors.Is(err, ErrNoDeltaAPI) || !IsNotFound(err)) {
				t.Fatalf("err = %v, want a plain not-found", err)
			}
			if tt.notFound && !IsNotFound(err) {
				t.Errorf("IsNotFound(%v) = false", err)
			}
			if diff := cmp.Diff(tt.wantConfig, got); diff != "" {
				t.Error(diff)
			}
			if r := ts.requests()[0]; r.Path != "/delta/v1/config" || r.Query != "catalog=main&protocol-versions=1.0" {
				t.Errorf("request = %+v", r)
			}
		})
	}
	cfg := DeltaConfig{Endpoints: []string{"POST  /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"}}
	if !cfg.Supports("post", "/v1/catalogs/{catalog}/schemas/{schema}/tables/{table}") || cfg.Supports("GET", "/v1/x") {
		t.Error("Supports")
	}
}

func TestTableExists(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch {
		case r.Method != http.MethodHead:
			w.WriteHeader(405)
		case strings.HasSuffix(r.URL.Path, "/there"):
			w.WriteHeader(204)
		case strings.HasSuffix(r.URL.Path, "/gone"):
			w.WriteHeader(404)
		default:
			w.WriteHeader(403)
		}
	})
	c := newClient(t, ts.URL, Options{})
	for name, want := range map[string]bool{"there": true, "gone": false} {
		got, err := c.TableExists(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: name})
		if err != nil || got != want {
			t.Errorf("%s: got %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := c.TableExists(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "secret"}); !IsForbidden(err) {
		t.Errorf("err = %v, want forbidden", err)
	}
}

func TestUpdateAndCreateSendWireBody(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, 200, loadTableBody) })
	c := newClient(t, ts.URL, Options{})
	req := UpdateTableRequest{
		Requirements: []Requirement{AssertTableUUID{UUID: "u"}, AssertEtag{Etag: "e"}},
		Updates:      []Update{SetTableComment{Comment: "c"}},
	}
	if _, err := c.UpdateTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}, req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateTable(context.Background(), catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}, UpdateTableRequest{Updates: []Update{SetTableComment{}}}); err == nil {
		t.Error("invalid request was accepted")
	}
	if _, err := c.CreateTable(context.Background(), "c", "s", CreateTableRequest{Name: "t", Location: "file:///x", TableType: TableTypeExternal,
		Columns: catalog.StructType{Fields: []catalog.StructField{{Name: "a", Type: catalog.DataType{Primitive: "long"}, Nullable: true}}}, Protocol: catalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}); err != nil {
		t.Fatal(err)
	}
	got := ts.requests()
	want := []recorded{
		{Method: "POST", Path: "/delta/v1/catalogs/c/schemas/s/tables/t",
			Body: `{"requirements":[{"type":"assert-table-uuid","uuid":"u"},{"type":"assert-etag","etag":"e"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`},
		{Method: "POST", Path: "/delta/v1/catalogs/c/schemas/s/tables",
			Body: `{"name":"t","location":"file:///x","table-type":"EXTERNAL","columns":{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]},"protocol":{"min-reader-version":1,"min-writer-version":2},"properties":{},"last-commit-timestamp-ms":0}`},
	}
	if diff := cmp.Diff(want, got, cmpIgnoreHeaders); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

var cmpIgnoreHeaders = cmp.Transformer("noHeaders", func(r recorded) recorded { r.Auth, r.UA, r.Query = "", "", ""; return r })

func TestClassicCreateAndDelete(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.Method + " " + r.URL.Path {
		case "POST " + basePath + "/catalogs":
			writeJSON(w, 200, `{"name":"main","id":"c1"}`)
		case "POST " + basePath + "/schemas":
			writeJSON(w, 200, `{"name":"s","catalog_name":"main","full_name":"main.s"}`)
		case "DELETE " + basePath + "/tables/main.s.t":
			w.WriteHeader(200)
		case "GET " + basePath + "/tables/main.s.t":
			writeJSON(w, 200, `{"name":"t","catalog_name":"main","schema_name":"s","table_type":"EXTERNAL","data_source_format":"DELTA","comment":"hello",
			  "columns":[{"name":"id","type_text":"bigint","type_json":"{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}","type_name":"LONG","position":0}],
			  "storage_location":"s3://b/t","table_id":"tid","properties":{"k":"v"}}`)
		default:
			w.WriteHeader(404)
		}
	})
	c := newClient(t, ts.URL, Options{})
	ctx := context.Background()
	if ci, err := c.CreateCatalog(ctx, CreateCatalogRequest{Name: "main"}); err != nil || ci.ID != "c1" {
		t.Fatalf("CreateCatalog = %+v, %v", ci, err)
	}
	if si, err := c.CreateSchema(ctx, CreateSchemaRequest{Name: "s", CatalogName: "main"}); err != nil || si.FullName != "main.s" {
		t.Fatalf("CreateSchema = %+v, %v", si, err)
	}
	ti, err := c.GetTable(ctx, "main.s.t")
	if err != nil || ti.Comment != "hello" || ti.TableID != "tid" || ti.DataSourceFormat != "DELTA" {
		t.Fatalf("GetTable = %+v, %v", ti, err)
	}
	cols, err := ColumnsFromTypeJSON(ti.Columns)
	if err != nil || len(cols.Fields) != 1 || cols.Fields[0].Type.Primitive != "long" {
		t.Fatalf("columns = %+v, %v", cols, err)
	}
	if err := c.DeleteTable(ctx, "main.s.t"); err != nil {
		t.Fatal(err)
	}
	bodies := []string{}
	for _, r := range ts.requests() {
		bodies = append(bodies, r.Body)
	}
	if diff := cmp.Diff([]string{`{"name":"main"}`, `{"name":"s","catalog_name":"main"}`, "", ""}, bodies); diff != "" {
		t.Error(diff)
	}
}

func TestUserAgentAndObserver(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if strings.Contains(r.URL.Path, "missing") {
			writeJSON(w, 404, `{"error":{"message":"nope","type":"NoSuchTableException","code":404}}`)
			return
		}
		writeJSON(w, 200, loadTableBody)
	})
	type obs struct {
		Op     string
		Status int
		Err    bool
	}
	var seen []obs
	c := newClient(t, ts.URL, Options{Version: "1.2.3", Observer: func(op string, status int, d time.Duration, err error) {
		if d < 0 {
			t.Errorf("negative duration")
		}
		seen = append(seen, obs{Op: op, Status: status, Err: err != nil})
	}})
	ctx := context.Background()
	if _, err := c.LoadTable(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadTable(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: "missing"}); err == nil {
		t.Fatal("LoadTable of a missing table succeeded")
	}
	if _, err := c.TableExists(ctx, catalog.TableName{Catalog: "c", Schema: "s", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]obs{{Op: "loadTable", Status: 200, Err: false}, {Op: "loadTable", Status: 404, Err: true}, {Op: "tableExists", Status: 200, Err: false}}, seen); diff != "" {
		t.Errorf("observer (-want +got):\n%s", diff)
	}
	if ua := ts.requests()[0].UA; ua != "deltasync/1.2.3" {
		t.Errorf("User-Agent = %q", ua)
	}
}
