package importcheck

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestViolations finds a forbidden import in a package's files, admits the
// allowed prefixes and the standard library, and ignores test files.
func TestViolations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a\nimport (\n\t\"fmt\"\n\t\"github.com/deltasync/deltasync/sync\"\n\t\"github.com/deltasync/deltasync/internal/redact\"\n)\n")
	write("b_test.go", "package a\nimport \"github.com/deltasync/deltasync/deltalog\"\n")
	got, err := Violations(dir, Module+"internal/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go imports github.com/deltasync/deltasync/sync"}; !slices.Equal(got, want) {
		t.Errorf("Violations = %q, want %q", got, want)
	}
	if got, _ := Violations(dir, Module+"internal/", Module+"sync"); len(got) != 0 {
		t.Errorf("with sync allowed: %q", got)
	}
	write("c.go", "package a\nimport \"github.com/deltasync/deltasync/syncx\"\n")
	if got, _ := Violations(dir, Module+"internal/", Module+"sync"); !slices.Equal(got, []string{"c.go imports github.com/deltasync/deltasync/syncx"}) {
		t.Errorf("an allowed package is not a prefix of another's name: %q", got)
	}
}

// TestImportBoundary: importcheck itself imports no deltasync package.
func TestImportBoundary(t *testing.T) { Boundary(t, "internal/importcheck") }
