package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection keeps the layout's one rule: imports flow
// cmd → sync → {deltalog, catalog} → internal, and deltalog and catalog
// never import each other (nor anything above them).
func TestImportDirection(t *testing.T) {
	const mod = "github.com/deltasync/deltasync/"
	forbidden := map[string][]string{
		"deltalog/...": {mod + "catalog", mod + "sync", mod + "cmd"},
		"catalog/...":  {mod + "deltalog", mod + "sync", mod + "cmd"},
		"sync/...":     {mod + "cmd"},
		// internal/ holds facts both deltalog and catalog import, so it
		// must not become a path between them.
		"internal/...": {mod + "deltalog", mod + "catalog", mod + "sync", mod + "cmd"},
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

// TestBinaryLinksNoTestCode keeps the daemon small: the demo's in-memory
// catalog (catalog/uctest) ships in it, but its spec validation
// (catalog/uctest/spectest: kin-openapi, gorilla/mux) and package testing
// are for tests only.
func TestBinaryLinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/deltasync: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/deltasync/deltasync/catalog/uctest") {
		t.Fatalf("the binary no longer links catalog/uctest: is this the right package list?\n%s", out)
	}
	for _, dep := range deps {
		switch {
		case dep == "testing", strings.HasPrefix(dep, "testing/"),
			strings.HasPrefix(dep, "github.com/getkin/kin-openapi"),
			strings.HasPrefix(dep, "github.com/gorilla/mux"),
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/catalog/uctest/spectest"),
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/catalog/contract"):
			t.Errorf("the deltasync binary links %s, which is for tests only", dep)
		}
	}
}
