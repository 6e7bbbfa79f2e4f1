package uctest_test

import (
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"testing"
)

func BenchmarkLoadSpec(b *testing.B) {
	dir, err := spectest.DefaultSpecDir()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := spectest.LoadSpec(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateValidated(b *testing.B) {
	s := spectest.NewServer()
	defer s.Close()
	s.AddSchema("c", "s")
	tables := s.URL() + "/delta/v1/catalogs/c/schemas/s/tables"
	r := do(b, "POST", tables, extCreate("t", "file:///tmp/bench"))
	uuid := r.md()["table-uuid"].(string)
	for b.Loop() {
		do(b, "POST", tables+"/t", upd(uuid, "", setProps("a", "1")))
	}
}
