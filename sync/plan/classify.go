package plan

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// ChangeClass says whether applying a change loses something the catalog
// holds: a column's tags and masks (a drop, a rename), values a type or a
// NOT NULL no longer admits, the partition layout readers rely on, a
// property someone set. A table rule with on_destructive: hold keeps a
// table's update out of the catalog while it has a destructive change.
type ChangeClass string

// The change classes.
const (
	ClassDestructive    ChangeClass = "destructive"
	ClassNonDestructive ChangeClass = "non_destructive"
)

// Class is a change's class, by kind and operation:
//
//   - a column removed (dropped) or renamed (OpRename: same
//     column-mapping identity, another name): destructive;
//   - a column changed: destructive when any part of it is (Details says
//     which): a type changed other than a widening the Delta protocol
//     sanctions (IsTypeWidening), nullability tightened (a column, an
//     array's elements or a map's values made NOT NULL), a nested field
//     dropped or renamed; a widening, loosened nullability, a nested field
//     added, a comment or other field metadata changed are not;
//   - a column added or moved: not destructive;
//   - partition columns changed in any way (added, removed, other
//     columns): destructive;
//   - clustering removed: destructive; clustering added or changed: not;
//   - a property removed: destructive; a property added or its value
//     changed: not;
//   - protocol, comment, watermark, location, UniForm: not destructive.
func classOf(kind DriftKind, op Op) ChangeClass {
	switch {
	case kind == KindSchema && (op == OpRemove || op == OpRename),
		kind == KindPartitioning,
		kind == KindClustering && op == OpRemove,
		kind == KindProperties && op == OpRemove:
		return ClassDestructive
	}
	return ClassNonDestructive
}

// Destructive returns the plan's destructive changes (nil if none).
func (p Plan) Destructive() []Change {
	var out []Change
	for _, c := range p.Changes() {
		if c.Class == ClassDestructive {
			out = append(out, c)
		}
	}
	return out
}

// note is one part of a column's change, for its class and Details.
type note struct {
	destructive bool
	text        string
}

// columnNotes compares a column as the catalog has it (before) with the
// log's (after), descending into structs, arrays and maps, and says what
// changed, each part with whether it is destructive.
func columnNotes(before, after *catalog.StructField) []note {
	var out []note
	add := func(destructive bool, format string, args ...any) {
		out = append(out, note{destructive, fmt.Sprintf(format, args...)})
	}
	fieldNotes(nil, before, after, add)
	return out
}

type addNote func(destructive bool, format string, args ...any)

// fieldNotes compares one matched field; path is where it sits in the
// column ("" for the column itself).
func fieldNotes(path []string, b, a *catalog.StructField, add addNote) {
	at := joinPath(path)
	if b.Name != a.Name && len(path) > 0 {
		add(true, "%s renamed to %q (destructive)", joinPath(append(path[:len(path)-1:len(path)-1], b.Name)), a.Name)
	}
	nullNotes(at, b.Nullable, a.Nullable, add)
	typeNotes(path, &b.Type, &a.Type, add)
	metadataNotes(at, b.Metadata, a.Metadata, add)
}

func nullNotes(at string, before, after bool, add addNote) {
	switch {
	case before && !after:
		add(true, "%snullability tightened: NOT NULL (destructive)", prefix(at))
	case !before && after:
		add(false, "%snullability loosened", prefix(at))
	}
}

func prefix(at string) string {
	if at == "" {
		return ""
	}
	return at + ": "
}

func typeNotes(path []string, before, after *catalog.DataType, add addNote) {
	at := joinPath(path)
	switch {
	case before.Struct != nil && after.Struct != nil:
		structNotes(path, before.Struct.Fields, after.Struct.Fields, add)
	case before.Array != nil && after.Array != nil:
		el := append(slices.Clip(path), "element")
		nullNotes(joinPath(el), before.Array.ContainsNull, after.Array.ContainsNull, add)
		typeNotes(el, &before.Array.ElementType, &after.Array.ElementType, add)
	case before.Map != nil && after.Map != nil:
		typeNotes(append(slices.Clip(path), "key"), &before.Map.KeyType, &after.Map.KeyType, add)
		val := append(slices.Clip(path), "value")
		nullNotes(joinPath(val), before.Map.ValueContainsNull, after.Map.ValueContainsNull, add)
		typeNotes(val, &before.Map.ValueType, &after.Map.ValueType, add)
	case before.Primitive != "" && after.Primitive != "":
		b, a := normalizeDecimal(before.Primitive), normalizeDecimal(after.Primitive)
		switch {
		case b == a:
		case IsTypeWidening(b, a):
			add(false, "%stype widened %s -> %s", prefix(at), b, a)
		default:
			add(true, "%stype changed %s -> %s (destructive)", prefix(at), b, a)
		}
	default: // another shape (a struct became a string, ...) or a type this package does not know
		if !equalType(before, after) {
			add(true, "%stype changed %s -> %s (destructive)", prefix(at), typeText(before), typeText(after))
		}
	}
}

// structNotes compares the fields of a nested struct, matched by
// identity (matchField).
func structNotes(path []string, before, after []catalog.StructField, add addNote) {
	matched := make([]bool, len(before))
	for j := range after {
		a := &after[j]
		i := matchField(before, matched, a)
		if i < 0 {
			add(false, "%s added", joinPath(append(slices.Clip(path), a.Name)))
			continue
		}
		matched[i] = true
		fieldNotes(append(slices.Clip(path), a.Name), &before[i], a, add)
	}
	for i := range before {
		if !matched[i] {
			add(true, "%s dropped (destructive)", joinPath(append(slices.Clip(path), before[i].Name)))
		}
	}
}

// metadataNotes notes field metadata keys that differ; the column-mapping
// id is what fields are matched on, and the keys that are table state
// (DefaultIgnoreFieldMetadata) are not changes. None is destructive.
func metadataNotes(at string, before, after map[string]any, add addNote) {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	ignored := ignoredFieldMetadata(nil)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k == columnMappingID || ignored.match(k) {
			continue
		}
		b, inB := before[k]
		a, inA := after[k]
		if inA && inB && canonicalAny(a) == canonicalAny(b) {
			continue
		}
		add(false, "%smetadata %s changed", prefix(at), k)
	}
}

// joinPath joins a path inside a column; a name that holds a dot or a
// backquote is quoted in backquotes, as Spark SQL spells it.
func joinPath(parts []string) string {
	out := make([]string, len(parts))
	for i, s := range parts {
		if strings.ContainsAny(s, ".`") {
			s = "`" + strings.ReplaceAll(s, "`", "``") + "`"
		}
		out[i] = s
	}
	return strings.Join(out, ".")
}

func typeText(t *catalog.DataType) string {
	if t.Primitive != "" {
		return normalizeDecimal(t.Primitive)
	}
	return jsonText(t)
}

var decimalType = regexp.MustCompile(`^decimal\((\d+),(\d+)\)$`)

func parseDecimal(s string) (p, sc int, ok bool) {
	m := decimalType.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(m[1])
	sc, err2 := strconv.Atoi(m[2])
	return p, sc, err1 == nil && err2 == nil
}

// integerDigits is the decimal precision an integer type needs: the type
// widening feature widens byte, short and integer to decimal(10+k1, k2)
// and long to decimal(20+k1, k2), k1 >= k2 >= 0.
var integerDigits = map[string]int{"byte": 10, "short": 10, "integer": 10, "long": 20}

// integerRank orders the integer types for byte → short → integer → long.
var integerRank = map[string]int{"byte": 1, "short": 2, "integer": 3, "long": 4}

// IsTypeWidening reports whether changing a primitive type from before to
// after is a widening the Delta protocol's type widening feature
// sanctions (PROTOCOL.md, "Type Widening": every value written under the
// old type reads back exactly under the new one, so no data file is
// rewritten): byte → short → integer → long; float → double; byte, short
// and integer → double; byte, short, integer and long → a decimal wide
// enough (decimal(10+k1,k2), decimal(20+k1,k2) for long, k1 >= k2 >= 0);
// decimal(p,s) → decimal(p+k1,s+k2) with k1 >= k2 >= 0 and not both 0;
// date → timestamp_ntz. Every other change of type is destructive.
func IsTypeWidening(before, after string) bool {
	before, after = normalizeDecimal(before), normalizeDecimal(after)
	if before == after {
		return false
	}
	if rb, ok := integerRank[before]; ok {
		if ra, ok := integerRank[after]; ok {
			return ra > rb
		}
		if after == "double" {
			return before != "long"
		}
		if p, s, ok := parseDecimal(after); ok {
			return p-s >= integerDigits[before]
		}
		return false
	}
	switch before {
	case "float":
		return after == "double"
	case "date":
		return after == "timestamp_ntz"
	}
	pb, sb, ok1 := parseDecimal(before)
	pa, sa, ok2 := parseDecimal(after)
	if !ok1 || !ok2 {
		return false
	}
	k1, k2 := pa-pb, sa-sb
	return k1 >= k2 && k2 >= 0 && k1 > 0
}
