package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deltasync/deltasync/deltalog"
)

// newInspectCmd prints what a table's _delta_log says the table is: the
// snapshot the sync would push to the catalog.
func newInspectCmd(c *cli) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "inspect [-o text|json] TABLE_URL",
		Short: "Read a Delta table's _delta_log and print its latest snapshot",
		Long: "inspect reads the transaction log of the table at TABLE_URL (a local path, file://, s3://, gs://,\n" +
			"azblob:// or mem:// URL) and prints its latest version, protocol, properties and schema.\n" +
			"-o json prints the snapshot with protocol and metaData exactly as the log spells them.\n" +
			"A log deltasync refuses (version gap, unsupported feature, corrupt file) exits 1.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("inspect: -o %q: want text or json", output)
			}
			tbl, err := deltalog.Open(c.ctx, args[0])
			if err != nil {
				return withTableRootHint(args[0], err)
			}
			defer tbl.Close()
			snap, err := tbl.Load(c.ctx, deltalog.LoadOptions{})
			if err != nil {
				return withTableRootHint(args[0], err)
			}
			if output == "json" {
				out, err := json.MarshalIndent(snap, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.stdout, string(out))
				return err
			}
			return writeSnapshotText(c.stdout, args[0], snap)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// writeSnapshotText renders a readable summary of a snapshot.
func writeSnapshotText(w io.Writer, url string, s *deltalog.Snapshot) error {
	var b strings.Builder
	line := func(k, format string, args ...any) {
		fmt.Fprintf(&b, "%-19s %s\n", k+":", fmt.Sprintf(format, args...))
	}
	line("table", "%s", url)
	line("version", "%d", s.Version)
	ts := time.UnixMilli(s.CommitTimestamp).UTC().Format(time.RFC3339Nano)
	line("commit timestamp", "%s (%d ms)", ts, s.CommitTimestamp)
	line("protocol", "reader %d, writer %d", s.Protocol.MinReaderVersion, s.Protocol.MinWriterVersion)
	if len(s.Protocol.ReaderFeatures) > 0 {
		line("reader features", "%s", strings.Join(s.Protocol.ReaderFeatures, ", "))
	}
	if len(s.Protocol.WriterFeatures) > 0 {
		line("writer features", "%s", strings.Join(s.Protocol.WriterFeatures, ", "))
	}
	line("catalog managed", "%s", yesNo(s.CatalogManaged))
	line("id", "%s", s.Metadata.ID)
	if s.Metadata.Name != "" {
		line("name", "%s", s.Metadata.Name)
	}
	if s.Metadata.Description != "" {
		line("description", "%s", s.Metadata.Description)
	}
	line("format", "%s", s.Metadata.Format.Provider)
	line("partition columns", "%s", listOrNone(s.Metadata.PartitionColumns))
	if cc := s.ClusteringColumns(); cc != nil {
		cols := make([]string, len(cc))
		for i, c := range cc {
			cols[i] = strings.Join(c, ".")
		}
		line("clustering columns", "%s", strings.Join(cols, ", "))
	}
	writeSorted(&b, "properties", s.Configuration())
	if s.Domains != nil {
		writeSorted(&b, "domains", s.Domains)
	}
	b.WriteString("schema:\n")
	if s.Schema != nil {
		writeFields(&b, s.Schema.Fields, 1)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSorted writes a map as "  key = value" lines sorted by key.
func writeSorted(b *strings.Builder, title string, m map[string]string) {
	if len(m) == 0 {
		fmt.Fprintf(b, "%-19s (none)\n", title+":")
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "  %s = %s\n", k, m[k])
	}
}

// writeFields writes struct fields as an indented tree.
func writeFields(b *strings.Builder, fields []deltalog.StructField, depth int) {
	for _, f := range fields {
		null := ""
		if !f.Nullable {
			null = " not null"
		}
		writeType(b, f.Name, f.Type, null, depth)
	}
}

// writeType writes one named type; nested types get children one level deeper.
func writeType(b *strings.Builder, name string, t deltalog.DataType, suffix string, depth int) {
	indent := strings.Repeat("  ", depth)
	switch {
	case t.Struct != nil:
		fmt.Fprintf(b, "%s%s: struct%s\n", indent, name, suffix)
		writeFields(b, t.Struct.Fields, depth+1)
	case t.Array != nil && isNested(t.Array.ElementType):
		fmt.Fprintf(b, "%s%s: array%s\n", indent, name, suffix)
		writeType(b, "element", t.Array.ElementType, "", depth+1)
	case t.Map != nil && (isNested(t.Map.KeyType) || isNested(t.Map.ValueType)):
		fmt.Fprintf(b, "%s%s: map%s\n", indent, name, suffix)
		writeType(b, "key", t.Map.KeyType, "", depth+1)
		writeType(b, "value", t.Map.ValueType, "", depth+1)
	default:
		fmt.Fprintf(b, "%s%s: %s%s\n", indent, name, t.String(), suffix)
	}
}

// isNested reports whether a type is a struct (arrays and maps of
// primitives render inline, e.g. array<string>).
func isNested(t deltalog.DataType) bool {
	return t.Struct != nil || (t.Array != nil && isNested(t.Array.ElementType)) ||
		(t.Map != nil && (isNested(t.Map.KeyType) || isNested(t.Map.ValueType)))
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}
