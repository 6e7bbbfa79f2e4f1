package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The generated references, relative to the repository's root.
const (
	referenceDir = "docs/reference"
	cliDir       = referenceDir + "/cli"
	valuesPath   = "deploy/helm/deltasync/values.yaml"
)

// newGenDocsCommand regenerates docs/reference from the code: the CLI
// reference from the command tree, the config reference and JSON Schema
// from the config's definitions, the metrics reference from the daemon's
// collectors and the Helm values reference from values.yaml. Hidden: it
// is for the repository, not for users; TestGeneratedDocsAreCurrent fails
// when a file it writes is stale.
func newGenDocsCommand(c *cli, root func() *cobra.Command) *cobra.Command {
	var dir, man string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Regenerate docs/reference (run from the repository's root)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			files, err := generatedDocs(root(), dir)
			if err != nil {
				return err
			}
			if err := writeGenerated(dir, files); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "deltasync: wrote %d files under %s\n", len(files), filepath.Join(dir, referenceDir))
			if man == "" {
				return nil
			}
			if err := os.MkdirAll(man, 0o755); err != nil {
				return err
			}
			r := root()
			r.DisableAutoGenTag = true
			return doc.GenManTree(r, &doc.GenManHeader{Title: "DELTASYNC", Section: "1", Source: "deltasync " + version}, man)
		},
	}
	cmd.Flags().StringVar(&dir, "root", ".", "the repository's root")
	cmd.Flags().StringVar(&man, "man", "", "also write man pages into this directory (not kept in the repository)")
	return cmd
}

// generatedDocs renders every generated file, keyed by its path relative
// to the repository's root.
func generatedDocs(root *cobra.Command, repo string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if err := cliReference(root, files); err != nil {
		return nil, err
	}
	schema, err := configSchemaJSON()
	if err != nil {
		return nil, err
	}
	files[referenceDir+"/config.schema.json"] = schema
	files[referenceDir+"/config.md"] = []byte(configReference())
	metrics, err := metricsReference()
	if err != nil {
		return nil, err
	}
	files[referenceDir+"/metrics.md"] = []byte(metrics)
	values, err := os.ReadFile(filepath.Join(repo, valuesPath))
	if err != nil {
		return nil, err
	}
	helm, err := helmReference(values)
	if err != nil {
		return nil, err
	}
	files[referenceDir+"/helm-values.md"] = []byte(helm)
	return files, nil
}

// cliReference renders one page per command with cobra's generator.
func cliReference(root *cobra.Command, files map[string][]byte) error {
	root.DisableAutoGenTag = true
	root.InitDefaultCompletionCmd() // as Execute adds it
	cmds := []*cobra.Command{root}
	for i := 0; i < len(cmds); i++ {
		for _, sub := range cmds[i].Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				sub.DisableAutoGenTag = true
				cmds = append(cmds, sub)
			}
		}
	}
	var index strings.Builder
	index.WriteString(generatedHeader + "# Command-line reference\n\nEvery command and flag of `deltasync`, generated from its command tree (what\n" +
		"`deltasync COMMAND --help` prints). What each command is for, with its exit codes: [commands](../commands.md).\n" +
		"Every flag can also be set as `DELTASYNC_<FLAG>` in the environment (repeatable flags comma-separated):\n" +
		"[configuration](../../configuration.md).\n\n")
	for _, c := range cmds {
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
			return err
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		files[cliDir+"/"+name] = append([]byte(generatedHeader), bytes.TrimRight(b.Bytes(), "\n")...)
		files[cliDir+"/"+name] = append(files[cliDir+"/"+name], '\n')
		fmt.Fprintf(&index, "- [%s](%s): %s\n", c.CommandPath(), name, c.Short)
	}
	files[cliDir+"/README.md"] = []byte(index.String())
	return nil
}

// writeGenerated writes the files and removes generated files that are no
// longer generated (a command removed).
func writeGenerated(repo string, files map[string][]byte) error {
	old, _ := filepath.Glob(filepath.Join(repo, cliDir, "*.md"))
	for _, p := range old {
		rel, _ := filepath.Rel(repo, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}
