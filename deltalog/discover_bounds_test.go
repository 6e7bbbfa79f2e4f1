package deltalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// endlessS3 is an S3 endpoint whose ListObjectsV2 of root/ never ends:
// every page is truncated, with the token and common prefixes page(n)
// gives for the n-th request (see endlessListS3).
func endlessS3(t *testing.T, page func(n int64) (token string, prefixes []string)) (string, *atomic.Int64) {
	t.Helper()
	return endlessListS3(t, "root/", func(n int64) (string, []string) {
		token, prefixes := page(n)
		entries := make([]string, len(prefixes))
		for i, p := range prefixes {
			entries[i] = fmt.Sprintf(`<CommonPrefixes><Prefix>root/%s/</Prefix></CommonPrefixes>`, p)
		}
		return token, entries
	})
}

// endlessListS3 is an S3 endpoint (bucket "lake") whose ListObjectsV2 of
// prefix never ends: every page is truncated, with the token and the
// entries (XML elements) page(n) gives for the n-th LIST. Any other
// request is answered 404 NoSuchKey. After 20,000 LISTs it ends the
// listing, so a client without a bound fails the test instead of hanging
// it. It returns the s3:// URL of prefix and the count of LISTs.
func endlessListS3(t *testing.T, prefix string, page func(n int64) (token string, entries []string)) (string, *atomic.Int64) {
	t.Helper()
	var lists atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		if r.URL.Query().Get("list-type") != "2" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no</Message></Error>`))
			return
		}
		n := lists.Add(1)
		token, entries := page(n)
		truncated := n <= 20000
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
			`<Name>lake</Name><Prefix>%s</Prefix><Delimiter>/</Delimiter><MaxKeys>1000</MaxKeys><KeyCount>%d</KeyCount><IsTruncated>%t</IsTruncated>`,
			prefix, len(entries), truncated)
		if truncated {
			fmt.Fprintf(&b, `<NextContinuationToken>%s</NextContinuationToken>`, token)
		}
		for _, e := range entries {
			b.WriteString(e)
		}
		b.WriteString(`</ListBucketResult>`)
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return "s3://lake/" + strings.TrimSuffix(prefix, "/") + "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true", &lists
}

// TestListDirsEndsAnEndlessListing: a store that pages forever ends with
// ErrListingUnbounded naming the location and the bound, within a bounded
// number of requests: the same token again at once; new tokens that bring
// no new directory after the idle bound; new directories on every page at
// the names bound. The S3 driver fills a page of 10 with as many requests
// as it takes (one entry each here), so each bound is in pages of 10
// requests at most. Before, ListDirs listed until the store stopped (the
// fake's 20,000 requests here).
func TestListDirsEndsAnEndlessListing(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	bounds := func(o *options) { o.listBounds = listDirsBounds{pages: 400, names: 300, idlePages: 50} }
	for _, tc := range []struct {
		name    string
		page    func(n int64) (string, []string)
		want    string
		maxReqs int64
	}{
		{"the same token and prefix forever", func(int64) (string, []string) { return "again", []string{"t"} },
			"next token was given before", 2 * 10},
		{"new tokens, the same prefix", func(n int64) (string, []string) { return fmt.Sprint("tok-", n), []string{"t"} },
			"50 pages in a row without a new directory", 51 * 10},
		{"new tokens, new prefixes", func(n int64) (string, []string) {
			return fmt.Sprint("tok-", n), []string{fmt.Sprint("a", n), fmt.Sprint("b", n)}
		}, "more than 300 directories", 31 * 5},
		{"new tokens, a new prefix every 40 pages", func(n int64) (string, []string) { return fmt.Sprint("tok-", n), []string{fmt.Sprint("t", n/40)} },
			"more than 400 pages", 400 * 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, lists := endlessS3(t, tc.page)
			handed := 0
			err := ListDirs(context.Background(), u, 10, func(names []string) error { handed += len(names); return nil }, bounds)
			var le *LogError
			if !errors.Is(err, ErrListingUnbounded) || !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s3://lake/root") {
				t.Fatalf("ListDirs = %v, want ErrListingUnbounded naming s3://lake/root and %q", err, tc.want)
			}
			if got := lists.Load(); got > tc.maxReqs {
				t.Errorf("%d LIST requests, bound %d", got, tc.maxReqs)
			}
		})
	}
	if d := (listDirsBounds{}).orDefault(); d != defaultListDirsBounds {
		t.Errorf("zero bounds are %+v, want the defaults", d)
	}
}
