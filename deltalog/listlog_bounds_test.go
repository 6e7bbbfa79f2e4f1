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

// endlessLogS3 is endlessListS3 over table t's _delta_log/: page(n) gives
// the log keys of the n-th page. The table's URL is s3://lake/t.
func endlessLogS3(t *testing.T, page func(n int64) (token string, keys []string)) (string, *atomic.Int64) {
	t.Helper()
	u, lists := endlessListS3(t, "t/_delta_log/", func(n int64) (string, []string) {
		token, keys := page(n)
		entries := make([]string, len(keys))
		for i, k := range keys {
			entries[i] = fmt.Sprintf(`<Contents><Key>t/_delta_log/%s</Key><LastModified>2026-12-01T00:00:00.000Z</LastModified><ETag>"e"</ETag><Size>10</Size></Contents>`, k)
		}
		return token, entries
	})
	return strings.Replace(u, "s3://lake/t/_delta_log?", "s3://lake/t?", 1), lists
}

// TestLoadEndsAnEndlessLogListing: a store whose listing of _delta_log/
// pages forever makes Load fail with ErrListingUnbounded, saying which
// bound broke, after a bounded number of requests, where before the
// listing went on until the store stopped (20,000 requests here) and held
// every page it had been sent. The same token twice ends it at the second
// page; new tokens over the same keys end it at the idle bound; new keys
// on every page at the page bound (small bounds here: the defaults are
// 100,000 pages and 1,000 idle ones).
func TestLoadEndsAnEndlessLogListing(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	defer func(b listDirsBounds) { logListBounds = b }(logListBounds)
	logListBounds = listDirsBounds{pages: 4, idlePages: 3}
	commit := func(v int64) string { return fmt.Sprintf("%020d.json", v) }
	for _, tc := range []struct {
		name    string
		page    func(n int64) (string, []string)
		want    string
		maxReqs int64
	}{
		{"the same token and key forever", func(int64) (string, []string) { return "again", []string{commit(0)} },
			"next token was given before", 2},
		{"new tokens, the same keys", func(n int64) (string, []string) { return fmt.Sprint("tok-", n), []string{commit(0), commit(1)} },
			"3 pages in a row without a new key", 4},
		{"new tokens, a new commit on every page", func(n int64) (string, []string) { return fmt.Sprint("tok-", n), []string{commit(n)} },
			"more than 4 pages", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, lists := endlessLogS3(t, tc.page)
			tbl, err := Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tbl.Load(context.Background(), LoadOptions{})
			if !errors.Is(err, ErrListingUnbounded) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v; want ErrListingUnbounded saying %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "_delta_log") {
				t.Errorf("error %q does not name the log directory", err)
			}
			// gocloud's S3 driver fills a page of 1,000 with as many
			// requests as it takes (one or two entries each here), so
			// each bound is in pages of 1,000 requests at most.
			if got := lists.Load(); got > tc.maxReqs*1000 {
				t.Errorf("%d LIST requests before it ended; want at most %d", got, tc.maxReqs*1000)
			}
		})
	}
}

// TestListLogPagesDropsRepeatedKeys: a store that sends a key on two pages
// (or twice on one) lists it once, so a commit is not replayed twice.
func TestListLogPagesDropsRepeatedKeys(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	pages := [][]string{
		{"00000000000000000000.json", "00000000000000000001.json"},
		{"00000000000000000001.json", "00000000000000000002.json", "00000000000000000002.json"},
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := n.Add(1) - 1
		var b strings.Builder
		last := int(i) >= len(pages)-1
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>lake</Name><IsTruncated>%t</IsTruncated>`, !last)
		if !last {
			fmt.Fprintf(&b, `<NextContinuationToken>p%d</NextContinuationToken>`, i+1)
		}
		for _, k := range pages[min(int(i), len(pages)-1)] {
			fmt.Fprintf(&b, `<Contents><Key>t/_delta_log/%s</Key><LastModified>2026-12-01T00:00:00.000Z</LastModified><Size>10</Size></Contents>`, k)
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	tbl, err := Open(context.Background(), "s3://lake/t?endpoint="+url.QueryEscape(srv.URL)+"&region=us-east-1&use_path_style=true&disable_https=true")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := tbl.listObjects(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	want := "_delta_log/00000000000000000000.json _delta_log/00000000000000000001.json _delta_log/00000000000000000002.json"
	if got := strings.Join(keys, " "); got != want {
		t.Fatalf("keys %q; want %q", got, want)
	}
}
