// Package importcheck holds the import-boundary check the packages that
// must stay independent of the rest of deltasync (catalog, catalog/hms)
// run in their tests: imports flow cmd → sync → {deltalog, catalog}.
package importcheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Module is the module path whose packages the check is about.
const Module = "github.com/deltasync/deltasync/"

// Violations returns, for the non-test Go files in dir, each import of a
// package of Module that allowed does not admit (an allowed path admits
// itself and the packages under it), as "file imports path".
func Violations(dir string, allowed ...string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, Module) || admitted(p, allowed) {
				continue
			}
			out = append(out, fmt.Sprintf("%s imports %s", filepath.Base(f), p))
		}
	}
	return out, nil
}

func admitted(p string, allowed []string) bool {
	for _, a := range allowed {
		a = strings.TrimSuffix(a, "/")
		if p == a || strings.HasPrefix(p, a+"/") {
			return true
		}
	}
	return false
}

// Boundary fails t for each import of the package in the current
// directory (a test's) that allowed does not admit; pkg names it in the
// errors. internal/ packages hold facts shared across the boundary and
// import no deltasync package themselves, so callers usually allow
// Module + "internal/".
func Boundary(t testing.TB, pkg string, allowed ...string) {
	t.Helper()
	vs, err := Violations(".", allowed...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%s: %s must not import other deltasync packages", v, pkg)
	}
}
