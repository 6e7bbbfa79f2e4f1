package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// repoRoot is the repository's root seen from this package's directory.
const repoRoot = "../.."

// TestGeneratedDocsAreCurrent fails when a file under docs/reference that
// gen-docs writes differs from what the code generates now, or when
// gen-docs would remove one: regenerate with `go run ./cmd/deltasync gen-docs`.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	files, err := generatedDocs(newRootCommand(c), repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Errorf("%s: %v (regenerate: go run ./cmd/deltasync gen-docs)", p, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (regenerate: go run ./cmd/deltasync gen-docs):\n%s", p, cmp.Diff(string(got), string(want)))
		}
	}
	onDisk, _ := filepath.Glob(filepath.Join(repoRoot, cliDir, "*.md"))
	for _, p := range onDisk {
		rel, _ := filepath.Rel(repoRoot, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s documents no command any more (regenerate: go run ./cmd/deltasync gen-docs)", rel)
		}
	}
}

// TestCLIReferenceCoversEveryFlag: every visible command has its page and
// every flag of it appears there, so the reference is the tree, not a
// subset of it.
func TestCLIReferenceCoversEveryFlag(t *testing.T) {
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	root := newRootCommand(c)
	files := map[string][]byte{}
	if err := cliReference(root, files); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range root.Commands() {
		page, ok := files[cliDir+"/"+strings.ReplaceAll(cmd.CommandPath(), " ", "_")+".md"]
		if !cmd.IsAvailableCommand() {
			if ok {
				t.Errorf("hidden command %s has a page", cmd.Name())
			}
			continue
		}
		if !ok {
			t.Errorf("command %s has no page", cmd.Name())
			continue
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !bytes.Contains(page, []byte("--"+f.Name)) {
				t.Errorf("%s: flag --%s not in its page", cmd.CommandPath(), f.Name)
			}
		})
	}
}

// TestConfigDocsCoverEveryKey: every key the config file can hold has its
// documentation in configDocs, and every entry there is a key.
func TestConfigDocsCoverEveryKey(t *testing.T) {
	keys := configKeys()
	if len(keys) < 60 {
		t.Fatalf("configKeys found %d keys; the walk is broken", len(keys))
	}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k.Path] = true
		if strings.TrimSpace(k.Doc) == "" {
			t.Errorf("config key %s has no documentation in configDocs (configdocs.go)", k.Path)
		}
	}
	for p := range configDocs {
		if !seen[p] {
			t.Errorf("configDocs documents %s, which is not a config key", p)
		}
	}
	// Spot checks that the walk reads the real definitions and defaults.
	byPath := map[string]configKey{}
	for _, k := range keys {
		byPath[k.Path] = k
	}
	for path, want := range map[string][2]string{
		"catalog.timeout":  {"duration", "`30s`"},
		"concurrency":      {"integer", "4"},
		"tables[].include": {"string or list of strings", ""},
		"schedule":         {"string", "`@every 1m`"},
		"storage.buckets":  {"list of mappings", ""},
	} {
		if got := byPath[path]; got.Type != want[0] || got.Default != want[1] {
			t.Errorf("%s: type %q default %q, want %q %q", path, got.Type, got.Default, want[0], want[1])
		}
	}
}

// TestHelmValuesDocumented: every value of the chart has a comment, which
// is its documentation in docs/reference/helm-values.md.
func TestHelmValuesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, valuesPath))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := helmValues(data)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, v := range vs {
		paths = append(paths, v.Path)
		if v.Doc == "" {
			t.Errorf("%s: value %s has no comment above it", valuesPath, v.Path)
		}
	}
	for _, want := range []string{"workload", "config", "image.tag", "cronjob", "token"} {
		if !slices.Contains(paths, want) {
			t.Errorf("value %s not documented (have %v)", want, paths)
		}
	}
}

// TestHelmValuesParser pins the helm-docs rules on a small file.
func TestHelmValuesParser(t *testing.T) {
	vs, err := helmValues([]byte("# File comment.\n\n# A's doc,\n# two lines.\na: 1\nb:\n  # c's doc.\n  c: \"x\"\n# d as a whole.\nd:\n  e: [1, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []helmValue{
		{Path: "a", Type: "int", Default: "1", Doc: "A's doc, two lines."},
		{Path: "b.c", Type: "string", Default: `"x"`, Doc: "c's doc."},
		{Path: "d", Type: "object", Default: "{e: [1, 2]}", Doc: "d as a whole."},
	}
	if diff := cmp.Diff(want, vs); diff != "" {
		t.Errorf("helmValues (-want +got):\n%s", diff)
	}
}

// TestGenDocsManPages: --man writes a page per command into a directory it
// creates, and the references into --root.
func TestGenDocsManPages(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, filepath.Dir(valuesPath)), 0o755); err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(filepath.Join(repoRoot, valuesPath))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, filepath.Dir(valuesPath)), "values.yaml", string(values))
	man := filepath.Join(dir, "man", "man1")
	code, _, errOut := runCLI(t, nil, "gen-docs", "--root", repo, "--man", man)
	if code != 0 {
		t.Fatalf("gen-docs --man: exit %d: %s", code, errOut)
	}
	for _, p := range []string{filepath.Join(man, "deltasync-plan.1"), filepath.Join(repo, referenceDir, "config.schema.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("gen-docs wrote no %s: %v", p, err)
		}
	}
}
