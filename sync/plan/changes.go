package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// Change is one difference of a Plan, in one shape whatever its kind:
// the field it concerns, what is done to it, and its value in the catalog
// (before) and in the log (after), as text. A value that does not exist
// on a side ("" then) is told by Op: an added column or property has no
// Catalog value, a removed one no Log value.
type Change struct {
	Kind  DriftKind `json:"kind"`
	Field string    `json:"field"`
	Op    Op        `json:"op"`
	// Catalog is the value before, as the catalog holds it.
	Catalog string `json:"catalog"`
	// Log is the value after, as the log has it.
	Log string `json:"log"`
	// Class says whether the change is destructive (see classOf).
	Class ChangeClass `json:"class"`
	// Details say, for a changed column, what changed in it (a type, a
	// nullability, a nested field), the destructive parts marked so.
	Details []string `json:"details,omitempty"`
}

// String is the change for people: `column price: remove (destructive)`.
func (c Change) String() string {
	s := fmt.Sprintf("%s: %s (%s)", c.Field, c.Op, c.Class)
	if len(c.Details) > 0 {
		s += ": " + strings.Join(c.Details, ", ")
	}
	return s
}

// Op is what a Change does to its field.
type Op string

// The operations of a Change.
const (
	OpAdd    Op = "add"    // the log has it, the catalog has not
	OpRemove Op = "remove" // the catalog has it, the log has not
	OpChange Op = "change" // both have it, with different values
	OpMove   Op = "move"   // a column at another position (Catalog and Log are positions)
	// OpRename is a column-mapped column with another name: the same
	// identity, its delta.columnMapping.id or else its physical name
	// (Field names it as the catalog does, Log holds its new definition;
	// Change.Rename reads both names).
	OpRename Op = "rename"
)

// Changes lists the plan's differences one field at a time, in the order
// of Kinds: per top-level column, per property, then one for each other
// kind. Unsupported types and problems are not changes (nothing fixes
// them) and are not listed. Changes of an empty plan is nil.
func (p Plan) Changes() []Change {
	var cs []Change
	add := func(k DriftKind, field string, op Op, cat, log string) {
		cs = append(cs, Change{Kind: k, Field: field, Op: op, Catalog: cat, Log: log, Class: classOf(k, op)})
	}
	if s := p.Schema; s != nil {
		n := len(cs)
		ignored := ignoredFieldMetadata(s.IgnoredFieldMetadata)
		for _, c := range columnChanges(s.Log, s.Catalog, *ignored.strip(&s.Log), *ignored.strip(&s.Catalog)) {
			add(KindSchema, "column "+c.name, c.op, c.cat, c.log)
			last := &cs[len(cs)-1]
			for _, n := range c.notes {
				last.Details = append(last.Details, n.text)
				if n.destructive {
					last.Class = ClassDestructive
				}
			}
		}
		if len(cs) == n { // equal top-level columns: the difference is an encoding's
			add(KindSchema, "columns", OpChange, jsonText(s.Catalog), jsonText(s.Log))
		}
	}
	if c := p.Partitioning; c != nil {
		add(KindPartitioning, "partition columns", opOf(len(c.Catalog) > 0, len(c.Log) > 0), textIf(len(c.Catalog) > 0, c.Catalog), textIf(len(c.Log) > 0, c.Log))
	}
	if c := p.Clustering; c != nil {
		add(KindClustering, "clustering columns", opOf(len(c.Catalog) > 0, len(c.Log) > 0), textIf(len(c.Catalog) > 0, c.Catalog), textIf(len(c.Log) > 0, c.Log))
	}
	if c := p.Protocol; c != nil {
		add(KindProtocol, "protocol", opOf(c.Catalog != nil, true), textIf(c.Catalog != nil, c.Catalog), jsonText(c.Log))
	}
	if c := p.Properties; c != nil {
		for _, k := range slices.Sorted(maps.Keys(c.Set)) {
			cat, had := c.Catalog[k]
			add(KindProperties, "property "+k, opOf(had, true), cat, c.Set[k])
		}
		for _, k := range c.Remove {
			add(KindProperties, "property "+k, OpRemove, c.Catalog[k], "")
		}
	}
	if c := p.Comment; c != nil {
		add(KindComment, "comment", opOf(c.Catalog != "", c.Log != ""), c.Catalog, c.Log)
	}
	if c := p.Location; c != nil {
		add(KindLocation, "location", OpChange, c.Catalog, c.Log)
	}
	if c := p.Version; c != nil {
		cat := ""
		if c.Catalog != nil {
			cat = strconv.FormatInt(*c.Catalog, 10)
		}
		add(KindVersion, "watermark", opOf(c.Catalog != nil, true), cat, strconv.FormatInt(c.Log, 10))
	}
	if u := p.Uniform; u != nil {
		cat := ""
		if u.ConvertedVersion != nil {
			cat = strconv.FormatInt(*u.ConvertedVersion, 10)
		}
		add(KindUniform, "iceberg pointer version", opOf(u.ConvertedVersion != nil, true), cat, strconv.FormatInt(u.LogVersion, 10))
	}
	return cs
}

// opOf is the operation between a value present in the catalog or not and
// in the log or not.
func opOf(inCatalog, inLog bool) Op {
	switch {
	case !inCatalog:
		return OpAdd
	case !inLog:
		return OpRemove
	}
	return OpChange
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func textIf(ok bool, v any) string {
	if !ok {
		return ""
	}
	return jsonText(v)
}

type columnChange struct {
	name     string
	op       Op
	cat, log string
	notes    []note // what changed in a changed or renamed column
}

// columnChanges lists top-level column differences (Changes and, in
// their words, SchemaChange.Details say them): the log's columns added, changed, renamed or
// moved, then the catalog's dropped. Columns are matched by identity
// (matchField: the column-mapping id, else the physical name, where both
// sides have one; a rename keeps it), else by name; a name kept with
// another identity is a column dropped and another added. A column's value is its JSON in the catalog model; a
// moved column's values are its positions.
//
// logCmp and catCmp are log and cat as compared: the same columns in the
// same order, without the field-metadata keys the diff ignores. A column
// is changed when those differ, and its notes are theirs, so a key the
// diff ignores makes no row and no note; the values reported are log's
// and cat's, whole.
func columnChanges(log, cat, logCmp, catCmp catalog.StructType) []columnChange {
	enc := func(f catalog.StructField) string {
		return jsonText(catalog.StructType{Fields: []catalog.StructField{f}})
	}
	matched := make([]bool, len(cat.Fields))
	var out []columnChange
	for i := range log.Fields {
		f := &log.Fields[i]
		j := matchField(cat.Fields, matched, f)
		if j < 0 {
			out = append(out, columnChange{name: f.Name, op: OpAdd, log: enc(*f)})
			continue
		}
		matched[j] = true
		c := &cat.Fields[j]
		switch {
		case c.Name != f.Name:
			notes := append([]note{{true, fmt.Sprintf("renamed to %q (destructive)", f.Name)}}, columnNotes(&catCmp.Fields[j], &logCmp.Fields[i])...)
			out = append(out, columnChange{name: c.Name, op: OpRename, cat: enc(*c), log: enc(*f), notes: notes})
		case enc(logCmp.Fields[i]) != enc(catCmp.Fields[j]):
			out = append(out, columnChange{name: f.Name, op: OpChange, cat: enc(*c), log: enc(*f), notes: columnNotes(&catCmp.Fields[j], &logCmp.Fields[i])})
		case i != j:
			out = append(out, columnChange{name: f.Name, op: OpMove, cat: strconv.Itoa(j), log: strconv.Itoa(i)})
		}
	}
	for j, f := range cat.Fields {
		if !matched[j] {
			out = append(out, columnChange{name: f.Name, op: OpRemove, cat: enc(f)})
		}
	}
	return out
}

// MarshalJSON writes the plan with its changes listed and classed
// ("changes"), after the per-kind fields.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	cs := p.Changes()
	if cs == nil {
		cs = []Change{}
	}
	return json.Marshal(struct {
		plain
		Changes []Change `json:"changes"`
	}{plain(p), cs})
}
