package deltalog

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// loadOK loads every corpus table the manifest expects to load.
func loadOK(t *testing.T) (names []string, snaps []*Snapshot) {
	t.Helper()
	for _, row := range readManifest(t) {
		if strings.HasPrefix(row.Outcome, "error") {
			continue
		}
		snap, err := openCorpusTable(t, row.Name).Load(context.Background(), LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", row.Name, err)
		}
		names, snaps = append(names, row.Name), append(snaps, snap)
	}
	return names, snaps
}

// TestCompactKeepsState: a compact snapshot has every public field of the
// loaded one but the schema (tree and string), knows the schema by its
// digest, renders the same protocol and metaData values otherwise, and
// Refresh continues from it.
func TestCompactKeepsState(t *testing.T) {
	names, snaps := loadOK(t)
	type rendered struct {
		Version         int64             `json:"version"`
		Protocol        Protocol          `json:"protocol"`
		Metadata        Metadata          `json:"metaData"`
		CommitTimestamp int64             `json:"commitTimestamp"`
		CatalogManaged  bool              `json:"catalogManaged"`
		Domains         map[string]string `json:"domains"`
	}
	render := func(s *Snapshot) rendered {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var r rendered
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return r
	}
	for i, full := range snaps {
		c := full.Compact()
		if c == full || c.Schema != nil || c.state.rawMetadata != nil || c.state.rawProtocol != nil {
			t.Fatalf("%s: Compact kept the tree or the raw JSON", names[i])
		}
		if c.Compact() != c {
			t.Errorf("%s: Compact of a compact snapshot is a copy", names[i])
		}
		if full.Schema == nil || full.state.rawMetadata == nil {
			t.Errorf("%s: Compact modified the loaded snapshot", names[i])
		}
		want := *full
		want.Schema, want.Metadata.SchemaString, want.Metadata.Configuration = nil, "", nil
		if diff := cmp.Diff(full.Metadata.Configuration, c.Configuration(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: compact snapshot's configuration (-loaded +compact):\n%s", names[i], diff)
		}
		if diff := cmp.Diff(want, *c, cmpopts.IgnoreUnexported(Snapshot{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: compact snapshot (-loaded +compact):\n%s", names[i], diff)
		}
		wantJSON := render(full)
		wantJSON.Metadata.SchemaString = ""
		if diff := cmp.Diff(wantJSON, render(c), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: JSON of the compact snapshot (-loaded +compact):\n%s", names[i], diff)
		}
		schema := full.Metadata.SchemaString
		if !c.SchemaIs(schema) || !full.SchemaIs(schema) || c.SchemaSum() != full.SchemaSum() ||
			c.SchemaSum() != sha256.Sum256([]byte(schema)) {
			t.Errorf("%s: the compact snapshot does not know its schema", names[i])
		}
		for _, other := range []string{"", schema + " ", strings.Replace(schema, "true", "false", 1)} {
			if other != schema && (c.SchemaIs(other) || full.SchemaIs(other)) {
				t.Errorf("%s: SchemaIs(%.40q) is true", names[i], other)
			}
		}
	}
}

// TestCompactSharesCommonStrings: what tables have in common (feature
// names, the format, property names, short property values) is one copy
// across compact snapshots; a long property value stays the table's own.
func TestCompactSharesCommonStrings(t *testing.T) {
	long := strings.Repeat("x", internedValueMax+1)
	snap := func() *Snapshot {
		// Fresh strings, as two tables' logs would decode them.
		return &Snapshot{
			Protocol: Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
				ReaderFeatures: []string{strings.Clone("columnMapping")}, WriterFeatures: []string{strings.Clone("columnMapping")}},
			Metadata: Metadata{ID: strings.Clone("id"), Format: Format{Provider: strings.Clone("parquet")},
				SchemaString: strings.Clone(`{"type":"struct","fields":[]}`), PartitionColumns: []string{strings.Clone("day")},
				Configuration: map[string]string{strings.Clone("delta.columnMapping.mode"): strings.Clone("name"), strings.Clone("owner.note"): strings.Clone(long)}},
		}
	}
	a, b := snap(), snap()
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if same(a.Metadata.Format.Provider, b.Metadata.Format.Provider) {
		t.Fatal("the two snapshots share strings already; the test cannot tell interning apart")
	}
	ca, cb := a.Compact(), b.Compact()
	confA, confB := ca.Configuration(), cb.Configuration()
	key := func(m map[string]string, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q in %v", want, m)
		return ""
	}
	for what, pair := range map[string][2]string{
		"reader feature":   {ca.Protocol.ReaderFeatures[0], cb.Protocol.ReaderFeatures[0]},
		"writer feature":   {ca.Protocol.WriterFeatures[0], cb.Protocol.WriterFeatures[0]},
		"partition column": {ca.Metadata.PartitionColumns[0], cb.Metadata.PartitionColumns[0]},
		"format":           {ca.Metadata.Format.Provider, cb.Metadata.Format.Provider},
		"property name":    {key(confA, "owner.note"), key(confB, "owner.note")},
		"short value":      {confA["delta.columnMapping.mode"], confB["delta.columnMapping.mode"]},
	} {
		if !same(pair[0], pair[1]) {
			t.Errorf("%s %q: two copies in two compact snapshots", what, pair[0])
		}
	}
	if same(confA["owner.note"], confB["owner.note"]) {
		t.Error("a long property value was interned")
	}
	if same(ca.Metadata.ID, cb.Metadata.ID) {
		t.Error("the table id was interned")
	}
	confA["x"] = "y"
	if _, ok := a.Metadata.Configuration["x"]; ok {
		t.Error("the compact snapshot's properties are the loaded snapshot's map")
	}
	if _, ok := ca.Configuration()["x"]; ok {
		t.Error("a change to the map Configuration returned changed the compact snapshot")
	}
}

// TestRefreshFromCompact: Refresh from a compact snapshot finds nothing
// new (and returns it), or advances it with the metaData carried over (the
// schema still known by its digest only), or with the new commit's
// metaData (its schema string and tree).
func TestRefreshFromCompact(t *testing.T) {
	ctx := context.Background()
	tbl, b, _ := memTable(t, "checkpoint")
	full, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev := full.Compact()
	snap, how, err := tbl.Refresh(ctx, prev, LoadOptions{})
	if err != nil || how != Unchanged || snap != prev {
		t.Fatalf("nothing new: %v %v, same snapshot %v", how, err, snap == prev)
	}
	put(t, b, commitKey(15), commitText(1500, addLine))
	snap, how, err = tbl.Refresh(ctx, prev, LoadOptions{})
	if err != nil || how != Advanced {
		t.Fatalf("one commit: %v %v", how, err)
	}
	if snap.Version != 15 || snap.CommitTimestamp != 1500 || snap.Schema != nil || snap.Metadata.SchemaString != "" ||
		!snap.SchemaIs(full.Metadata.SchemaString) || snap.Metadata.ID != full.Metadata.ID {
		t.Errorf("advanced from a compact snapshot: version %d, ts %d, schema tree %v, metaData %+v",
			snap.Version, snap.CommitTimestamp, snap.Schema != nil, snap.Metadata)
	}
	if diff := cmp.Diff(full.Metadata.Configuration, snap.Metadata.Configuration, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("configuration carried over from a compact snapshot (-loaded +advanced):\n%s", diff)
	}
	if again := snap.Compact(); !again.SchemaIs(full.Metadata.SchemaString) {
		t.Error("compacting the advanced snapshot lost the schema's digest")
	}

	// A new metaData brings its schema: string and tree.
	put(t, b, commitKey(16), commitText(1600, strings.Replace(metadataLine, "intCol", "newCol", 1)))
	snap, how, err = tbl.Refresh(ctx, snap.Compact(), LoadOptions{})
	if err != nil || how != Advanced {
		t.Fatalf("a metaData commit: %v %v", how, err)
	}
	if snap.Schema == nil || !strings.Contains(snap.Metadata.SchemaString, "newCol") || !snap.SchemaIs(snap.Metadata.SchemaString) ||
		snap.SchemaIs(full.Metadata.SchemaString) {
		t.Errorf("advanced by a metaData commit: schema tree %v, schema string %q", snap.Schema != nil, snap.Metadata.SchemaString)
	}
}

// TestCompactRetainedHeap bounds what a compact snapshot keeps alive: at
// most compactOverhead bytes per snapshot, whatever its schema's size
// (the Snapshot struct, ~350 bytes, metaData id, name and description,
// format, partition columns, configuration map and protocol features; the
// corpus tables have up to ~10 properties). A loaded snapshot keeps the
// schema tree, the raw protocol and metaData JSON (the schema string a
// second time, escaped) and private strings besides; it is measured too,
// for the log.
func TestCompactRetainedHeap(t *testing.T) {
	const compactOverhead = 1024 // measured: 828
	names, snaps := loadOK(t)
	distinct := map[string]bool{}
	schemaBytes := 0
	for _, s := range snaps {
		if !distinct[s.Metadata.SchemaString] {
			distinct[s.Metadata.SchemaString] = true
			schemaBytes += len(s.Metadata.SchemaString)
		}
	}
	live := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	withFull := live()
	compact := make([]*Snapshot, len(snaps))
	for i, s := range snaps {
		compact[i] = s.Compact()
	}
	clear(snaps)
	withCompact := live()
	clear(compact)
	none := live()
	n := int64(len(names))
	full, kept := withFull-none, withCompact-none
	t.Logf("%d corpus tables (%d distinct schemas, %d schema bytes): loaded snapshots %d bytes (%d per table), compact %d bytes (%d per table)",
		n, len(distinct), schemaBytes, full, full/n, kept, kept/n)
	if bound := compactOverhead * n; kept > bound {
		t.Errorf("compact snapshots retain %d bytes, want at most %d (%d per table)", kept, bound, compactOverhead)
	}
	if kept >= full {
		t.Errorf("compact snapshots retain %d bytes, loaded ones %d: nothing saved", kept, full)
	}
}

// TestCompactKeepingSchema: the compact form that keeps the schema string
// is compact in every other way, stays as it is when compacted again, and
// Refresh continues from it with the schema parsed again.
func TestCompactKeepingSchema(t *testing.T) {
	ctx := context.Background()
	tbl, b, _ := memTable(t, "checkpoint")
	full, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := full.CompactKeepingSchema()
	if k == full || k.Schema != nil || k.state.rawMetadata != nil || k.Metadata.Configuration != nil ||
		k.Metadata.SchemaString != full.Metadata.SchemaString || !k.SchemaIs(full.Metadata.SchemaString) {
		t.Fatalf("kept schema %q, tree %v, raw %v", k.Metadata.SchemaString, k.Schema != nil, k.state.rawMetadata != nil)
	}
	if diff := cmp.Diff(full.Metadata.Configuration, k.Configuration(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("configuration (-loaded +compact):\n%s", diff)
	}
	if k.Compact() != k || k.CompactKeepingSchema() != k {
		t.Error("compacting a compact snapshot again made a copy")
	}
	put(t, b, commitKey(15), commitText(1500, addLine))
	snap, how, err := tbl.Refresh(ctx, k, LoadOptions{})
	if err != nil || how != Advanced {
		t.Fatalf("one commit: %v %v", how, err)
	}
	if snap.Schema == nil || snap.Metadata.SchemaString != full.Metadata.SchemaString {
		t.Errorf("advanced from a schema-keeping compact snapshot: tree %v, schema %q", snap.Schema != nil, snap.Metadata.SchemaString)
	}
}
