package notify_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/deltasync/deltasync/sync/notify"
)

// TestChangesFacetMatchesItsSchema: the deltasync_changes facet of every
// kind of event validates against the JSON Schema its _schemaURL names
// (docs/spec/DeltasyncChangesDatasetFacet.json), and a facet that breaks
// it (an op the schema does not list, a change row without its field) is
// refused — so the published schema and what deltasync sends cannot
// drift apart. OpenLineage's own DatasetFacet, which the schema extends
// by reference, is not fetched (no network here, and neither
// openlineage-python nor -java ships the spec's JSON Schema): a stand-in
// holds it to the two keys the spec's BaseFacet requires.
func TestChangesFacetMatchesItsSchema(t *testing.T) {
	const specFile = "../../docs/spec/DeltasyncChangesDatasetFacet.json"
	c := jsonschema.NewCompiler()
	add := func(url string, r *strings.Reader) {
		doc, err := jsonschema.UnmarshalJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
	}
	add("https://openlineage.io/spec/2-0-2/OpenLineage.json", strings.NewReader(
		`{"$defs":{"DatasetFacet":{"type":"object","required":["_producer","_schemaURL"],`+
			`"properties":{"_producer":{"type":"string"},"_schemaURL":{"type":"string"}}}}}`))
	spec, err := os.ReadFile(filepath.FromSlash(specFile))
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ := strings.Cut(notify.ChangesFacetURL, "#")
	add(base, strings.NewReader(string(spec)))
	schema, err := c.Compile(notify.ChangesFacetURL)
	if err != nil {
		t.Fatalf("compiling %s: %v", specFile, err)
	}
	facet := func(t *testing.T, e notify.Event) map[string]any {
		t.Helper()
		b, err := notify.OpenLineage(e, notify.Lineage{CatalogName: "unity"})
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Outputs []struct {
				Facets map[string]json.RawMessage `json:"facets"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal(b, &ev); err != nil || len(ev.Outputs) != 1 {
			t.Fatalf("event %s: %v", b, err)
		}
		raw, ok := ev.Outputs[0].Facets[notify.ChangesFacet]
		if !ok {
			t.Fatalf("event has no %s facet: %s", notify.ChangesFacet, b)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := v.(map[string]any)["_schemaURL"]; got != notify.ChangesFacetURL {
			t.Errorf("_schemaURL %v, want %s", got, notify.ChangesFacetURL)
		}
		return v.(map[string]any)
	}
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	for _, kind := range []notify.Kind{notify.KindSynced, notify.KindHeld, notify.KindRefused, notify.KindFlagged, notify.KindRegistered, notify.KindOrphaned} {
		e, ok := notify.FromNotice(schemaNotice(), "dsync-1", now)
		if !ok {
			t.Fatal("no event from the synced notice")
		}
		e.Kind, e.Reason = kind, "why"
		if err := schema.Validate(facet(t, e)); err != nil {
			t.Errorf("%s: the facet deltasync sends fails its own schema: %v", kind, err)
		}
	}
	e, _ := notify.FromNotice(schemaNotice(), "dsync-1", now)
	for what, breakIt := range map[string]func(map[string]any){
		"an op the schema does not list": func(f map[string]any) { f["changes"].([]any)[0].(map[string]any)["op"] = "rename" },
		"a change row without its field": func(f map[string]any) { delete(f["changes"].([]any)[0].(map[string]any), "field") },
		"no _producer":                   func(f map[string]any) { delete(f, "_producer") },
	} {
		f := facet(t, e)
		breakIt(f)
		if err := schema.Validate(f); err == nil {
			t.Errorf("%s: the schema accepts it", what)
		}
	}
}
