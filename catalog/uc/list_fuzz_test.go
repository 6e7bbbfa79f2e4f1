package uc

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// fuzzPageEntries and fuzzPageBytes are small bounds, so that the fuzzer
// reaches them.
const (
	fuzzPageEntries = 3
	fuzzPageBytes   = 2048
)

var listPageSeeds = []string{
	`{"tables":[{"name":"a","catalog_name":"c","schema_name":"s","columns":[{"name":"x","type_json":"{\"a\":\"]\"}"}]},{"name":"b"}],"next_page_token":"b"}`,
	`{"tables":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}]}`,
	`{"tables":[{"name":"a\\\"],"},{"name":"b,c"}],"x":[1,2,3,4,5]}`,
	`{"catalogs":[{"name":"c","properties":{"k":"[,,,]"}}],"next_page_token":null}`,
	`{"error_code":"SCHEMA_NOT_FOUND","details":[{"reason":"SCHEMA_NOT_FOUND","@type":"google.rpc.ErrorInfo"}],"message":"Schema not found: c.s"}`,
	`{"error":{"message":"m","type":"NoSuchTableException","code":404}}`,
	`{"tables":[],"ERROR_CODE":null,"error":null}`,
	`null`, `[]`, ` {} `, `{"tables":[[1,2],[3,[4,5,6,7]]]}`, `{"tables":[{"columns":"[[["}]}`,
}

// FuzzListPage reads arbitrary bytes as a listTables and a listCatalogs
// page, as the client does (readPage, then decodePage), with small bounds,
// and checks it against encoding/json: what is accepted decodes to what
// json decodes (columns aside) and holds at most the bound; a page json
// accepts, that is an object without an error envelope, within the bounds,
// is accepted.
func FuzzListPage(f *testing.F) {
	for _, s := range append(listPageSeeds, dropColumnsSeeds...) {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, announce bool) {
		checkListPage(t, b, announce, "tables", true, func(p *listPage[listedTable]) []listedTable { return p.Tables })
		checkListPage(t, b, announce, "catalogs", false, func(p *listPage[CatalogInfo]) []CatalogInfo { return p.Catalogs })
	})
}

func checkListPage[T any](t *testing.T, b []byte, announce bool, key string, drop bool, items func(*listPage[T]) []T) {
	t.Helper()
	// Announced, the body arrives in one read; not announced, a byte at a
	// time, so the scan resumes at every offset.
	var src io.Reader = bytes.NewReader(b)
	cl := int64(len(b))
	if !announce {
		src, cl = iotest.OneByteReader(src), -1
	}
	lim := &pageLimit{entries: fuzzPageEntries, bytes: fuzzPageBytes, dropColumns: drop}
	var page *listPage[T]
	body, err := readPage(src, cl, lim)
	if err == nil {
		page, err = decodePage("list", body, items)
	}

	// What encoding/json makes of the page.
	var ref listPage[T]
	refErr := json.Unmarshal(b, &ref)
	if refErr == nil && drop {
		refErr = json.Unmarshal(dropColumns(b), &ref) // columns are not kept
	}
	if err == nil {
		if n := len(items(page)); n > fuzzPageEntries {
			t.Fatalf("%s page of %d entries accepted, bound %d: %q", key, n, fuzzPageEntries, b)
		}
		if int64(len(b)) > fuzzPageBytes {
			t.Fatalf("%s page of %d bytes accepted, bound %d", key, len(b), fuzzPageBytes)
		}
		if refErr == nil {
			if diff := cmp.Diff(items(&ref), items(page), cmp.AllowUnexported(listedTable{})); diff != "" {
				t.Fatalf("%s page %q decodes unlike json (-json +ours):\n%s", key, b, diff)
			}
			if deref(ref.NextPageToken) != deref(page.NextPageToken) {
				t.Fatalf("%s page %q: token %q, json %q", key, b, deref(page.NextPageToken), deref(ref.NextPageToken))
			}
		}
		return
	}
	// A refusal must be one of the bounds, an envelope, or what json refuses.
	if refErr != nil || int64(len(b)) > fuzzPageBytes || notAnObject(b) != nil ||
		ref.ErrorCode != nil || (len(ref.Error) > 0 && string(ref.Error) != "null") || maxTopLevelArray(b) > fuzzPageEntries {
		return
	}
	t.Fatalf("%s page %q within the bounds refused: %v", key, b, err)
}

// maxTopLevelArray is the most elements of an array that is a value of
// the top-level object (every occurrence of a repeated key counted), or -1.
func maxTopLevelArray(b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return -1
	}
	most := 0
	for d.More() {
		if _, err := d.Token(); err != nil { // key
			return -1
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return -1
		}
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) == nil && len(arr) > most {
			most = len(arr)
		}
	}
	return most
}
