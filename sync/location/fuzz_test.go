package location

import (
	"strings"
	"testing"
)

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"/data/t/", "file:/x", "file:///a//b", "s3://b/k/", "abfss://c@a.dfs.core.windows.net/t", "", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, Normalize(n))
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
		c := ObjectRoot(s)
		if again := ObjectRoot(c); again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, c, again)
		}
	})
}
