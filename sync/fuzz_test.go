package sync

import "testing"

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
		sel, err := NewSelector([]Rule{{Include: []string{pattern, "!" + pattern + "x"}, Exclude: []string{pattern + ".zz"}}})
		if err != nil {
			return
		}
		sel.Match(c, s, tb) // must not panic
		sel.MayMatchSchema(c, s)
		sel.Catalogs()
		sel.Explicit()
	})
}
