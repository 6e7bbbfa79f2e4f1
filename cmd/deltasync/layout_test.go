package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection keeps the layout's one rule: imports flow
// cmd → sync → {deltalog, catalog}, and deltalog and catalog never import
// each other (nor anything above them).
func TestImportDirection(t *testing.T) {
	const mod = "github.com/deltasync/deltasync/"
	forbidden := map[string][]string{
		"deltalog/...": {mod + "catalog", mod + "sync", mod + "cmd"},
		"catalog/...":  {mod + "deltalog", mod + "sync", mod + "cmd"},
		"sync/...":     {mod + "cmd"},
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "-test", "../../"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range bad {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
