package plan

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/google/go-cmp/cmp"
)

// Changes lists each difference once, field by field, with what the
// catalog holds and what the log says, and says whether it adds, removes
// or changes the field.
func TestChangesEnumeratesThePlan(t *testing.T) {
	log := testLog()
	rec := faithful(t, log)
	if cs := Diff(log, rec, DiffOptions{}).Changes(); cs != nil {
		t.Fatalf("a plan in sync lists changes: %+v", cs)
	}
	md := &rec
	md.Columns.Fields = md.Columns.Fields[:2]                                               // the log adds "part"
	md.Columns.Fields[0], md.Columns.Fields[1] = md.Columns.Fields[1], md.Columns.Fields[0] // and orders them
	md.Properties["owner.team"] = "hr"
	md.Properties["stale"] = "x"
	md.Protocol.MinWriterVersion = 5
	rec.Comment = ""
	v := int64(3)
	md.LastCommitVersion = &v
	p := Diff(log, rec, DiffOptions{})
	got := p.Changes()
	want := []Change{
		{Kind: KindSchema, Field: `column id`, Op: OpMove, Catalog: "1", Log: "0", Class: ClassNonDestructive},
		{Kind: KindSchema, Field: `column tags`, Op: OpMove, Catalog: "0", Log: "1", Class: ClassNonDestructive},
		{Kind: KindSchema, Field: `column part`, Op: OpAdd, Log: `{"type":"struct","fields":[{"name":"part","type":"string","nullable":true,"metadata":{}}]}`, Class: ClassNonDestructive},
		{Kind: KindProtocol, Field: "protocol", Op: OpChange, Catalog: jsonText(p.Protocol.Catalog), Log: jsonText(log.Protocol), Class: ClassNonDestructive},
		{Kind: KindProperties, Field: "property owner.team", Op: OpChange, Catalog: "hr", Log: "sales", Class: ClassNonDestructive},
		{Kind: KindProperties, Field: "property stale", Op: OpRemove, Catalog: "x", Class: ClassDestructive},
		{Kind: KindComment, Field: "comment", Op: OpAdd, Log: "orders", Class: ClassNonDestructive},
		{Kind: KindVersion, Field: "watermark", Op: OpChange, Catalog: "3", Log: "7", Class: ClassNonDestructive},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	kinds := map[DriftKind]bool{}
	for _, c := range got {
		kinds[c.Kind] = true
	}
	for _, k := range p.Kinds() {
		if !kinds[k] {
			t.Errorf("kind %s of the plan has no change", k)
		}
	}
}

// A field-metadata key the diff is told to ignore makes no change of its
// own: with another column added, the column that differs only in an
// ignored key is not listed as changed, and no note names the key. Before,
// Changes compared the columns whole, so the plan listed a changed column
// the update would not have sent for that key alone.
func TestChangesLeaveOutIgnoredFieldMetadata(t *testing.T) {
	log := testLog()
	rec := faithful(t, log)
	// The catalog's first column carries another value of a key the
	// options ignore, and lacks the log's last column.
	rec.Columns.Fields = rec.Columns.Fields[:len(rec.Columns.Fields)-1]
	f := &rec.Columns.Fields[0]
	f.Metadata = maps.Clone(f.Metadata)
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	f.Metadata["app.lineage"] = "catalog-side"
	opts := DiffOptions{IgnoreFieldMetadata: []string{"app.*"}}
	p := Diff(log, rec, opts)
	if p.Schema == nil {
		t.Fatal("a dropped column made no schema change")
	}
	var fields []string
	for _, c := range p.Changes() {
		fields = append(fields, c.Field)
		for _, d := range c.Details {
			if strings.Contains(d, "app.lineage") {
				t.Errorf("change %s has a note on the ignored key: %q", c.Field, d)
			}
		}
	}
	if want := []string{"column " + log0Last(t, log)}; !slices.Equal(fields, want) {
		t.Errorf("changes %q; want %q", fields, want)
	}
	for _, d := range p.Schema.Details {
		if strings.Contains(d, rec.Columns.Fields[0].Name) {
			t.Errorf("schema details mention the column differing only in an ignored key: %q", d)
		}
	}
	// Not ignored, the same key is a change of that column.
	p = Diff(log, rec, DiffOptions{})
	if n := len(p.Changes()); n != 2 {
		t.Errorf("without the ignore: %d changes, want 2 (the metadata, the added column): %+v", n, p.Changes())
	}
}

// log0Last is the name of the last top-level column of log's schema.
func log0Last(t *testing.T, log LogState) string {
	t.Helper()
	cols, err := catalog.ColumnsFromSchemaString(log.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	return cols.Fields[len(cols.Fields)-1].Name
}
