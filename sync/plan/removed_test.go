package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every removal carries what the catalog held: a property the log no
// longer has, a column it dropped, the partition columns, the clustering
// columns and the comment it cleared. The change's catalog side is that
// value, in Changes and in the JSON plan, so a person sees what is about
// to go before approving and an auditor reads what went. Before, a removed
// property's catalog value was "" (Diff kept only the values of the keys
// it set).
func TestRemovalsCarryTheCatalogValue(t *testing.T) {
	log := testLog()
	rec := faithful(t, log)
	rec.Properties["owner.region"] = "emea"
	log.SchemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1","comment":"key"}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`
	log.PartitionColumns = nil
	log.Clustering = nil
	log.Description = ""
	p := Diff(log, rec, DiffOptions{})

	want := map[string]string{
		"property owner.region": "emea",
		"column part":           `{"type":"struct","fields":[{"name":"part","type":"string","nullable":true,"metadata":{}}]}`,
		"partition columns":     `["part"]`,
		"clustering columns":    `[["col-1"]]`,
		"comment":               "orders",
	}
	seen := map[string]bool{}
	for _, c := range p.Changes() {
		if c.Op != OpRemove {
			continue
		}
		seen[c.Field] = true
		w, ok := want[c.Field]
		if !ok {
			t.Errorf("unexpected removal %+v", c)
			continue
		}
		if c.Catalog != w || c.Log != "" {
			t.Errorf("%s: removal carries catalog %q, log %q; want catalog %q (what the record held), log \"\"", c.Field, c.Catalog, c.Log, w)
		}
	}
	for f := range want {
		if !seen[f] {
			t.Errorf("no removal of %s in %+v", f, p.Changes())
		}
	}

	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			Catalog map[string]string `json:"catalog"`
		} `json:"properties"`
		Changes []Change `json:"changes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Properties.Catalog["owner.region"] != "emea" {
		t.Errorf("JSON plan's properties.catalog = %v, want owner.region: emea", doc.Properties.Catalog)
	}
	found := false
	for _, c := range doc.Changes {
		if c.Field == "property owner.region" {
			found = c.Catalog == "emea" && c.Op == OpRemove
		}
	}
	if !found {
		t.Errorf("JSON plan's changes do not say property owner.region: remove with catalog emea: %s", strings.TrimSpace(string(b)))
	}
}
