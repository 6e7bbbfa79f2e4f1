package fakes3

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Indexed answers every LIST as s3mem does (same keys, prefixes, sizes
// and ETags), page by page, for prefixes, delimiters and markers.
func TestIndexedListsAsS3memDoes(t *testing.T) {
	ix, mem := NewIndexed(), s3mem.New()
	for _, b := range []gofakes3.Backend{ix, mem} {
		if err := b.CreateBucket("b"); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			for _, f := range []string{"_delta_log/00.json", "_delta_log/01.json", "_delta_log/_last_checkpoint", "data/p=1/x.parquet"} {
				body := []byte(fmt.Sprintf("t%02d/%s", i, f))
				if _, err := b.PutObject("b", string(body), nil, bytes.NewReader(body), int64(len(body)), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := b.DeleteObject("b", "t07/_delta_log/01.json"); err != nil {
			t.Fatal(err)
		}
	}
	type q struct {
		prefix, delim, marker string
		max                   int64
	}
	for _, c := range []q{
		{"t07/_delta_log/", "", "", 0},
		{"t07/_delta_log/", "", "t07/_delta_log/00.json", 0},
		{"t08/_delta_log/", "", "t08/_delta_log/00.json", 1},
		{"", "/", "", 0},
		{"", "/", "", 7},
		{"", "/", "t05/data/p=1/x.parquet", 4},
		{"t1", "/", "", 0},
		{"t12/", "/", "", 0},
		{"nope/", "", "", 0},
		{"", "", "t29/_delta_log/_last_checkpoint", 0},
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			pre := &gofakes3.Prefix{HasPrefix: c.prefix != "", Prefix: c.prefix, HasDelimiter: c.delim != "", Delimiter: c.delim}
			page := gofakes3.ListBucketPage{Marker: c.marker, HasMarker: c.marker != "", MaxKeys: c.max}
			got, err := ix.ListBucket("b", pre, page)
			if err != nil {
				t.Fatal(err)
			}
			want, err := mem.ListBucket("b", pre, page)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := render(got), render(want); g != w {
				t.Errorf("indexed:\n%s\ns3mem:\n%s", g, w)
			}
		})
	}
}

func render(l *gofakes3.ObjectList) string {
	var lines []string
	for _, p := range l.CommonPrefixes {
		lines = append(lines, "prefix "+p.Prefix)
	}
	for _, c := range l.Contents {
		lines = append(lines, fmt.Sprintf("%s %d %s", c.Key, c.Size, c.ETag))
	}
	slices.Sort(lines)
	return fmt.Sprint(lines, " truncated=", l.IsTruncated)
}
