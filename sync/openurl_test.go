package sync

import (
	"testing"
	"unsafe"
)

// TestOpenedURLShared: the URL a table on an object store with bucket
// options is opened at is kept without a string of its own per table: its
// base is the catalog's location string, its query one string for the
// bucket's tables. (Kept whole, as before, each table's state held a
// ~110-byte URL of its own.)
func TestOpenedURLShared(t *testing.T) {
	pol, err := NewStoragePolicy([]string{"s3://lake/**"}, []BucketOptions{{Location: "s3://lake",
		Options: map[string]string{"endpoint": "http://127.0.0.1:9000", "region": "us-east-1", "use_path_style": "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	var kept []openedURL
	for _, loc := range []string{"s3://lake/t000001", "s3://lake/t000002"} {
		_, openURL, err := pol.Resolve(loc)
		if err != nil {
			t.Fatal(err)
		}
		u := keepURL(openURL, loc)
		if !u.is(openURL) {
			t.Fatalf("kept %+v is not %s", u, openURL)
		}
		if unsafe.StringData(u.base) != unsafe.StringData(loc) {
			t.Errorf("%s: the kept URL's base %q is a copy, not the location's string", loc, u.base)
		}
		kept = append(kept, u)
	}
	if unsafe.StringData(kept[0].query) != unsafe.StringData(kept[1].query) {
		t.Errorf("two tables of one bucket keep their query %q twice", kept[0].query)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = keepURL("s3://lake/t000001?"+kept[0].query, "s3://lake/t000001") }); allocs > 1 {
		t.Errorf("keep allocates %.0f times for a known query", allocs)
	}
	for _, c := range []struct {
		u    openedURL
		url  string
		want bool
	}{
		{openedURL{base: "s3://a/t"}, "s3://a/t", true},
		{openedURL{base: "s3://a/t"}, "s3://a/t?x=1", false},
		{openedURL{base: "s3://a/t", query: "x=1"}, "s3://a/t?x=1", true},
		{openedURL{base: "s3://a/t", query: "x=1"}, "s3://a/t?x=2", false},
		{openedURL{base: "s3://a/t", query: "x=1"}, "s3://a/tx?x=1", false},
		{openedURL{base: "s3://a/t", query: "x=1"}, "s3://a/t", false},
		{openedURL{base: "s3://a/t", query: "x=1"}, "s3://a/t&x=1", false},
		{openedURL{}, "", true},
	} {
		if got := c.u.is(c.url); got != c.want {
			t.Errorf("%+v.is(%q) = %v, want %v", c.u, c.url, got, c.want)
		}
	}
	// Another base: kept as a copy of its own, not a substring of the URL.
	openURL := "s3://lake/t000003?" + kept[0].query
	u := keepURL(openURL, "s3://lake//t000003")
	if !u.is(openURL) || unsafe.StringData(u.base) == unsafe.StringData(openURL) {
		t.Errorf("kept %+v for %s: want an equal copy", u, openURL)
	}
}
