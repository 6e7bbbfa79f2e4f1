package plan

import (
	"testing"

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
		{Kind: KindProperties, Field: "property stale", Op: OpRemove, Class: ClassDestructive},
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
