package catalog

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/importcheck"
)

// kindPackages are the catalog kinds: each owns its wire model (and the
// wire libraries it speaks through), which no other package's code may
// use. Adding a kind adds its package here.
var kindPackages = map[string][]string{
	importcheck.Module + "catalog/uc":   nil,
	importcheck.Module + "catalog/hms":  {"github.com/beltran/gohive", "github.com/apache/thrift"},
	importcheck.Module + "catalog/glue": {"github.com/aws/aws-sdk-go-v2/service/glue"},
}

// mayUseKinds are the packages that may import a kind: the command that
// chooses the kind from the catalog's URL (the one factory), a kind's own
// test servers and wire contract suite, and the fakes that stand in for
// a kind's server in tests.
var mayUseKinds = []string{
	importcheck.Module + "cmd/",
	importcheck.Module + "catalog/uctest",
	importcheck.Module + "catalog/contract",
	importcheck.Module + "internal/fake",
}

// TestNoKindLeaks keeps each kind's wire types in its package: no
// package's non-test code but the factory's (cmd), a kind's test servers
// and fakes imports a kind or its wire library, and no kind imports
// another. sync reconciles against the Kind interface alone.
func TestNoKindLeaks(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", importcheck.Module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list listed %d packages: is this the module?\n%s", len(lines), out)
	}
	owner := func(imp string) string {
		for k, libs := range kindPackages {
			if imp == k || strings.HasPrefix(imp, k+"/") {
				return k
			}
			for _, l := range libs {
				if imp == l || strings.HasPrefix(imp, l+"/") {
					return k
				}
			}
		}
		return ""
	}
	for _, line := range lines {
		pkg, imps, _ := strings.Cut(line, ":")
		mine := owner(pkg)
		may := false
		for _, m := range mayUseKinds {
			if pkg == strings.TrimSuffix(m, "/") || strings.HasPrefix(pkg, m) {
				may = true
			}
		}
		for _, imp := range strings.Fields(imps) {
			k := owner(imp)
			if k == "" || k == mine || may {
				continue
			}
			if mine != "" {
				t.Errorf("%s (a kind) imports %s, another kind's: kinds are independent", pkg, imp)
			} else {
				t.Errorf("%s imports %s: a kind's wire types stay in its package (%s); use the catalog.Kind interface", pkg, imp, k)
			}
		}
	}
	if testing.Verbose() {
		t.Logf("%d packages checked", len(lines))
	}
}
