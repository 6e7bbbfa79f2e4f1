package main

import (
	"os"
	"os/exec"
	"regexp"
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

// TestReconcileKnowsNoSource keeps the reconcile path free of its sources:
// sync (the package, not its tests) imports nothing of sync/events, and
// of the catalogs only the root (the seam: catalog.Kind), no kind's
// package; sync/register creates records through the kind and reads
// storage through its host (sync), so it imports neither sync nor sync/plan;
// sync/plan is pure (no sync, no deltalog: it decides from
// values, and reads nothing), and sync/location and sync/audit are leaves
// that import nothing of the module.
func TestReconcileKnowsNoSource(t *testing.T) {
	const mod = "github.com/deltasync/deltasync/"
	for pkg, allowed := range map[string][]string{
		"sync":          {mod + "sync", mod + "sync/plan", mod + "sync/location", mod + "sync/audit", mod + "sync/metrics", mod + "sync/change", mod + "sync/register", mod + "deltalog", mod + "catalog", mod + "internal"},
		"sync/register": {mod + "sync/register", mod + "sync/location", mod + "deltalog", mod + "catalog", mod + "internal"},
		"sync/change":   {mod + "sync/change", mod + "sync/plan", mod + "sync/location", mod + "sync/audit", mod + "catalog", mod + "internal"},
		"sync/metrics":  {mod + "sync/metrics", mod + "sync/plan", mod + "sync/location", mod + "deltalog", mod + "catalog", mod + "internal"},
		"sync/plan":     {mod + "sync/plan", mod + "sync/location", mod + "catalog", mod + "internal"},
		"sync/location": {mod + "sync/location"},
		"sync/audit":    {mod + "sync/audit"},
	} {
		out, err := exec.Command("go", "list", "-deps", "../../"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !strings.HasPrefix(dep, mod) {
				continue
			}
			ok := slices.ContainsFunc(allowed, func(a string) bool {
				// sync and catalog admit themselves, not their subpackages
				// (a kind is a subpackage of catalog).
				return dep == a || a != mod+"sync" && a != mod+"catalog" && strings.HasPrefix(dep, a+"/")
			})
			if !ok {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}

// TestBinaryLinksNoTestCode keeps the daemon small: the demo's in-memory
// catalog (catalog/uctest) ships in it, but its spec validation
// (catalog/uctest/spectest: kin-openapi, gorilla/mux), the test helpers
// of internal/ and package testing are for tests only.
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
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/catalog/contract"),
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/internal/testenv"),
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/internal/testcorpus"),
			strings.HasPrefix(dep, "github.com/deltasync/deltasync/internal/hostile"):
			t.Errorf("the deltasync binary links %s, which is for tests only", dep)
		}
	}
}

// TestBuildsLeaveOutGRPCDirectPath: the binary's builds (make build, the
// release, the image, the peer benchmark) pass disable_grpc_modules, and
// with it the binary links none of the GCS client's gRPC DirectPath
// modules (xDS and its envoy protos, RLS): ~140 packages whose init runs
// at every start-up (BENCHMARKS.md, "Process start-up"), for a gRPC
// transport the GCS driver never uses.
func TestBuildsLeaveOutGRPCDirectPath(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "disable_grpc_modules", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags disable_grpc_modules -deps ./cmd/deltasync: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "cloud.google.com/go/storage") {
		t.Fatalf("the binary no longer links cloud.google.com/go/storage: is this the right package list?\n%s", out)
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "google.golang.org/grpc/xds") || strings.HasPrefix(dep, "github.com/envoyproxy/") ||
			strings.HasPrefix(dep, "google.golang.org/grpc/balancer/rls") {
			t.Errorf("with -tags disable_grpc_modules the binary still links %s", dep)
		}
	}
	for _, f := range []string{"../../Makefile", "../../.ci/release.sh", "../../deploy/Dockerfile", "../../deltalog/bench/bench.sh"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		builds := 0
		for _, line := range strings.Split(string(data), "\n") {
			if !goBuild.MatchString(line) {
				continue
			}
			builds++
			if !strings.Contains(line, "disable_grpc_modules") && !strings.Contains(line, "$(BUILD_TAGS)") {
				t.Errorf("%s builds the binary without -tags disable_grpc_modules: %s", f, strings.TrimSpace(line))
			}
		}
		if builds == 0 {
			t.Errorf("%s has no go build line: is this the right file?", f)
		}
	}
}

// goBuild matches a go build command line (not cargo build).
var goBuild = regexp.MustCompile(`(^|[^a-z])go build |\$\(GO\) build `)
