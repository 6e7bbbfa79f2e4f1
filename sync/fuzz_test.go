package sync

import (
	"strings"
	"testing"
)

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"", "0/1", "2/3", "3/3", "-1/2", "a/b", "1/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Count != 0 && (sh.Index < 0 || sh.Index >= sh.Count) {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
		if sh.Count > 0 {
			if back, err := ParseShard(sh.String()); err != nil || back != sh {
				t.Fatalf("round trip %q -> %+v -> %v", s, sh, err)
			}
		}
	})
}

func FuzzSelector(f *testing.F) {
	for _, s := range []string{"main.sales.*", "!*.tmp_*", "[a-", "a.b.c.d", "x", "*.*", "a..b"} {
		f.Add(s, "main", "sales", "orders")
	}
	f.Fuzz(func(_ *testing.T, pattern, c, s, tb string) {
		sel, err := NewSelector([]Rule{{Include: []string{pattern, "!" + pattern + "x"}}}, []string{pattern + ".zz"})
		if err != nil {
			return
		}
		sel.Match(c, s, tb) // must not panic
		sel.MayMatchSchema(c, s)
		sel.Catalogs()
		sel.Explicit()
	})
}

func FuzzNormalizeLocation(f *testing.F) {
	for _, s := range []string{"/data/t/", "file:/x", "file:///a//b", "s3://b/k/", "abfss://c@a.dfs.core.windows.net/t", "", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeLocation(s)
		if NormalizeLocation(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, NormalizeLocation(n))
		}
		if strings.HasSuffix(n, "/") && n != "file:///" {
			t.Fatalf("trailing slash kept: %q -> %q", s, n)
		}
	})
}

func FuzzCanonicalObjectRoot(f *testing.F) {
	for _, s := range []string{"s3://B/w//t/", "gs:// ", "abfss://c@a.dfs.core.windows.net/t", "azblob://c/t?x", "s3://b/t%41", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalObjectRoot(s)
		if again := canonicalObjectRoot(c); again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, again)
		}
	})
}
