package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// markdownFiles are the repository's Markdown documents, relative to its
// root: the top-level ones, docs/ and deploy/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	top, _ := filepath.Glob(filepath.Join(repoRoot, "*.md"))
	for _, p := range top {
		out = append(out, filepath.Base(p))
	}
	for _, dir := range []string{"docs", "deploy"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, _ := filepath.Rel(repoRoot, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Contains(out, "README.md") || len(out) < 20 {
		t.Fatalf("found only %v", out)
	}
	return out
}

// mdBlock is a fenced code block: its info string, its text (the fence's
// indentation removed) and the line it starts on.
type mdBlock struct {
	fence, text string
	line        int
	indent      int
}

// splitMarkdown returns the prose lines (code blocks blanked, inline code
// removed) and the fenced code blocks of a document.
func splitMarkdown(doc string) (prose []string, blocks []mdBlock) {
	inline := regexp.MustCompile("`[^`]*`")
	var cur *mdBlock
	for i, l := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			if cur == nil {
				cur = &mdBlock{fence: strings.TrimPrefix(trimmed, "```"), line: i + 1, indent: len(l) - len(strings.TrimLeft(l, " "))}
			} else {
				blocks = append(blocks, *cur)
				cur = nil
			}
			prose = append(prose, "")
			continue
		}
		if cur != nil {
			cur.text += strings.TrimPrefix(l, strings.Repeat(" ", cur.indent)) + "\n"
			prose = append(prose, "")
			continue
		}
		prose = append(prose, inline.ReplaceAllString(l, ""))
	}
	return prose, blocks
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	anchorRE  = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

// anchors are the fragment ids a document offers, as GitHub renders them:
// each heading's slug (duplicates numbered) and explicit <a id>s.
func anchors(doc string) map[string]bool {
	prose, _ := splitMarkdown(doc)
	out := map[string]bool{}
	count := map[string]int{}
	for i, l := range prose {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			// the heading with its inline code, as GitHub slugs it
			raw := strings.Split(doc, "\n")[i]
			s := slug(headingRE.FindStringSubmatch(raw)[2])
			if n := count[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			count[s]++
		}
	}
	for _, m := range anchorRE.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = true
	}
	return out
}

// slug is GitHub's heading anchor: lower case, punctuation dropped, spaces
// to hyphens.
func slug(h string) string {
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("—–…→←“”‘’×·", r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsLinksResolve: every relative link of every Markdown document
// names a file that exists, and its #fragment a heading or anchor of it.
func TestDocsLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	for _, f := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		prose, _ := splitMarkdown(string(b))
		for i, l := range prose {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				path := f
				if file != "" {
					path = filepath.ToSlash(filepath.Join(filepath.Dir(f), file))
				}
				st, err := os.Stat(filepath.Join(repoRoot, path))
				if err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", f, i+1, target, path)
					continue
				}
				if frag == "" {
					continue
				}
				if st.IsDir() || !strings.HasSuffix(path, ".md") {
					t.Errorf("%s:%d: link %q: a fragment into %s, which is no Markdown file", f, i+1, target, path)
					continue
				}
				if cache[path] == nil {
					d, _ := os.ReadFile(filepath.Join(repoRoot, path))
					cache[path] = anchors(string(d))
				}
				if !cache[path][frag] {
					t.Errorf("%s:%d: link %q: %s has no heading or anchor %q", f, i+1, target, path, frag)
				}
			}
		}
	}
}

// TestSlug pins the GitHub anchor rules the link check relies on.
func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Storage access and secrets":                "storage-access-and-secrets",
		"What a watermark-only write costs":         "what-a-watermark-only-write-costs",
		"DeltasyncAbsent":                           "deltasyncabsent",
		"`catalog.url` and `tables`":                "catalogurl-and-tables",
		"Hive Metastore: 10,000 tables (issue #28)": "hive-metastore-10000-tables-issue-28",
		"The table says “refused”":                  "the-table-says-refused",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// configTopKeys are the top-level keys of the config file.
func configTopKeys() map[string]bool {
	out := map[string]bool{}
	for _, k := range configKeys() {
		if !strings.ContainsAny(k.Path, ".[") {
			out[k.Path] = true
		}
	}
	return out
}

// TestDocsConfigSnippets: every YAML block of the documentation that is a
// deltasync config (its top-level keys include a config key) matches the
// schema and passes check-config. A fragment (no catalog, or no tables
// and no register) is checked as part of a minimal config; files it names
// for secrets are created with a stand-in, ${VAR}s set.
func TestDocsConfigSnippets(t *testing.T) {
	s := compiledConfigSchema(t)
	top := configTopKeys()
	checked := 0
	for _, f := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		_, blocks := splitMarkdown(string(b))
		for _, blk := range blocks {
			if blk.fence != "yaml" && blk.fence != "yml" {
				continue
			}
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(blk.text), &doc); err != nil {
				continue // not a mapping: a manifest list or prose, not a config
			}
			isConfig := false
			for k := range doc {
				isConfig = isConfig || top[k]
			}
			if !isConfig {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d", f, blk.line)
			t.Run(where, func(t *testing.T) { checkSnippet(t, s, where, blk.text, doc) })
		}
	}
	if checked < 5 {
		t.Errorf("checked only %d config snippets; the detection is broken", checked)
	}
}

func checkSnippet(t *testing.T, s *jsonschema.Schema, where, text string, doc map[string]any) {
	dir := t.TempDir()
	if _, ok := doc["catalog"]; !ok {
		doc["catalog"] = map[string]any{"url": ucURL}
	}
	_, hasTables := doc["tables"]
	if _, ok := doc["register"]; !ok && !hasTables {
		doc["tables"] = []any{map[string]any{"include": "main.*.*"}}
	}
	standInFiles(doc, dir)
	full, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemaCheck(s, full); err != nil {
		t.Errorf("%s: does not match the config schema: %v\n%s", where, err, text)
	}
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`\$\{(\w+)\}`).FindAllStringSubmatch(string(full), -1) {
		env[m[1]] = "stand-in"
	}
	for _, m := range regexp.MustCompile(`(?m)token_env: (\w+)$`).FindAllStringSubmatch(string(full), -1) {
		env[m[1]] = "stand-in" // the variable a CI job sets from its secrets
	}
	code, _, errOut := runCLI(t, env, "check-config", "--config", writeFile(t, dir, "deltasync.yaml", string(full)))
	if code != 0 {
		t.Errorf("%s: check-config refuses it (exit %d):\n%s\n%s", where, code, errOut, text)
	}
}

// standInFiles points every secret-file key of a config at a file that
// exists (check-config reads them).
func standInFiles(v any, dir string) {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok {
			for _, x := range l {
				standInFiles(x, dir)
			}
		}
		return
	}
	for k, x := range m {
		if s, ok := x.(string); ok && (k == "token_file" || k == "client_secret_file") && s != "" {
			p := filepath.Join(dir, k)
			_ = os.WriteFile(p, []byte("stand-in-secret\n"), 0o600)
			m[k] = p
			continue
		}
		standInFiles(x, dir)
	}
}

// TestReadmeFirstCommands: the README opens with the two commands a
// newcomer needs, and CI runs exactly the second.
func TestReadmeFirstCommands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, blocks := splitMarkdown(string(b))
	if len(blocks) == 0 {
		t.Fatal("README.md has no code block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(blocks[0].text), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if want := []string{"go run ./cmd/deltasync demo", "make test"}; !slices.Equal(cmds, want) {
		t.Errorf("README.md's first block runs %q, want %q", cmds, want)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(ci)), "\nmake test") {
		t.Errorf(".ci/run does not end by running make test:\n%s", ci)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; keep it under 200 and put the rest in docs/", n)
	}
}
