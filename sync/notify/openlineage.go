package notify

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The OpenLineage schema URLs deltasync's events and facets name: those of
// the spec version (2-0-2) and facet versions openlineage-python 1.54.0
// generates (checked by TestOpenLineageMatchesPythonClient).
const (
	olRunEventURL     = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	olSchemaFacetURL  = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
	olSymlinksURL     = "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet"
	olCatalogURL      = "https://openlineage.io/spec/facets/1-1-0/CatalogDatasetFacet.json#/$defs/CatalogDatasetFacet"
	olVersionFacetURL = "https://openlineage.io/spec/facets/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet"
	// ChangesFacetURL is the JSON Schema of deltasync's custom facet
	// (docs/notifications.md); custom facets are named with a prefix
	// (deltasync_) and carry their own _producer and _schemaURL.
	ChangesFacetURL = "https://github.com/deltasync/deltasync/blob/main/docs/spec/DeltasyncChangesDatasetFacet.json#/$defs/DeltasyncChangesDatasetFacet"
	// ChangesFacet is the custom facet's key in a dataset's facets.
	ChangesFacet = "deltasync_changes"
)

// Lineage says how events are named in OpenLineage.
type Lineage struct {
	// Namespace is the job's namespace (default "deltasync").
	Namespace string
	// Producer is the URI of the producing software (default
	// DefaultProducer).
	Producer string
	// CatalogName and CatalogURI name the catalog for the catalog and
	// symlink facets (e.g. "unity", the server's URL).
	CatalogName, CatalogURI string
}

// DefaultProducer is deltasync's OpenLineage producer URI.
const DefaultProducer = "https://github.com/deltasync/deltasync"

func (l Lineage) withDefaults() Lineage {
	if l.Namespace == "" {
		l.Namespace = "deltasync"
	}
	if l.Producer == "" {
		l.Producer = DefaultProducer
	}
	if l.CatalogName == "" {
		l.CatalogName = "catalog"
	}
	return l
}

type olFacet struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

type olField struct {
	Name   string    `json:"name"`
	Type   string    `json:"type,omitempty"`
	Fields []olField `json:"fields,omitempty"`
}

type olIdentifier struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Type      string `json:"type"`
}

type olChangesFacet struct {
	olFacet
	Event      string   `json:"event"`
	EventID    string   `json:"eventId"`
	Instance   string   `json:"instance"`
	Reason     string   `json:"reason,omitempty"`
	LogVersion *int64   `json:"logVersion,omitempty"`
	Changes    []Change `json:"changes"`
}

// OpenLineage is e as an OpenLineage RunEvent of one run of the job
// "deltasync.<catalog kind>" with the table as its output dataset: the
// schema facet (the log's schema), the symlink facet (the catalog's name
// for the table), the catalog facet, the dataset version facet (the Delta
// version) and deltasync's own facet with the change rows.
func OpenLineage(e Event, l Lineage) ([]byte, error) {
	l = l.withDefaults()
	base := func(u string) olFacet { return olFacet{Producer: l.Producer, SchemaURL: u} }
	facets := map[string]any{}
	if len(e.Schema) > 0 {
		fields, err := schemaFields(e.Schema)
		if err != nil {
			return nil, fmt.Errorf("notify: table %s: log schema: %w", e.Table, err)
		}
		facets["schema"] = struct {
			olFacet
			Fields []olField `json:"fields"`
		}{base(olSchemaFacetURL), fields}
	}
	ns, name := datasetName(e, l)
	facets["symlinks"] = struct {
		olFacet
		Identifiers []olIdentifier `json:"identifiers"`
	}{base(olSymlinksURL), []olIdentifier{{Namespace: symlinkNamespace(l), Name: e.Table, Type: "TABLE"}}}
	facets["catalog"] = struct {
		olFacet
		Framework   string `json:"framework"`
		Type        string `json:"type"`
		Name        string `json:"name"`
		MetadataURI string `json:"metadataUri,omitempty"`
		Source      string `json:"source"`
	}{base(olCatalogURL), "delta", e.CatalogKind, l.CatalogName, l.CatalogURI, "deltasync"}
	if e.LogVersion != nil {
		facets["version"] = struct {
			olFacet
			DatasetVersion string `json:"datasetVersion"`
		}{base(olVersionFacetURL), strconv.FormatInt(*e.LogVersion, 10)}
	}
	changes := e.Changes
	if changes == nil {
		changes = []Change{}
	}
	facets[ChangesFacet] = olChangesFacet{olFacet: base(ChangesFacetURL), Event: string(e.Kind), EventID: e.ID,
		Instance: e.Instance, Reason: e.Reason, LogVersion: e.LogVersion, Changes: changes}
	ev := map[string]any{
		"eventTime": e.Time.UTC().Format(time.RFC3339Nano),
		"eventType": olEventType(e.Kind),
		"producer":  l.Producer,
		"schemaURL": olRunEventURL,
		"run":       map[string]any{"runId": runID(e.ID)},
		"job":       map[string]any{"namespace": l.Namespace, "name": "deltasync." + e.CatalogKind},
		"inputs":    []any{},
		"outputs":   []any{map[string]any{"namespace": ns, "name": name, "facets": facets}},
	}
	return json.Marshal(ev)
}

// olEventType is the run state an event's kind ends its run in: a write
// made is COMPLETE, a write refused FAIL, anything else (held, flagged,
// orphaned) OTHER.
func olEventType(k Kind) string {
	switch k {
	case KindSynced, KindRegistered:
		return "COMPLETE"
	case KindRefused:
		return "FAIL"
	}
	return "OTHER"
}

// runID is the event's ID as a UUID (version 8, RFC 9562: custom), so that
// a resend is the same run.
func runID(id string) string {
	b := []byte(id)
	for len(b) < 32 {
		b = append(b, '0')
	}
	s := string(b[:32])
	s = s[:12] + "8" + s[13:16] + "a" + s[17:]
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// datasetName is the dataset's OpenLineage name, by the naming spec: its
// storage location split into namespace (scheme://authority) and name
// (the path). Without a location, the catalog names it.
func datasetName(e Event, l Lineage) (ns, name string) {
	if u, err := url.Parse(e.Location); err == nil && u.Scheme != "" {
		name = strings.TrimPrefix(u.Path, "/")
		if u.Scheme == "file" {
			return "file", "/" + name
		}
		return u.Scheme + "://" + u.Host, name
	}
	return symlinkNamespace(l), e.Table
}

func symlinkNamespace(l Lineage) string {
	if l.CatalogURI != "" {
		return l.CatalogURI
	}
	return l.CatalogName
}

// deltaField is a field of a Delta schema (PROTOCOL.md, Schema
// Serialization Format); its type is a string or a struct, array or map.
type deltaField struct {
	Name string          `json:"name"`
	Type json.RawMessage `json:"type"`
}

type deltaComplex struct {
	Type        string          `json:"type"`
	Fields      []deltaField    `json:"fields"`
	ElementType json.RawMessage `json:"elementType"`
	KeyType     json.RawMessage `json:"keyType"`
	ValueType   json.RawMessage `json:"valueType"`
}

// schemaFields is a Delta schemaString as the schema facet's fields: a
// primitive's type as Delta names it, a struct's fields nested, an array
// or map by its kind (its element struct's fields nested).
func schemaFields(schema json.RawMessage) ([]olField, error) {
	var s deltaComplex
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	if s.Type != "struct" {
		return nil, fmt.Errorf("type %q, want struct", s.Type)
	}
	return structFields(s.Fields)
}

func structFields(fs []deltaField) ([]olField, error) {
	out := make([]olField, 0, len(fs))
	for _, f := range fs {
		of, err := fieldOf(f.Name, f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		out = append(out, of)
	}
	return out, nil
}

func fieldOf(name string, t json.RawMessage) (olField, error) {
	var prim string
	if json.Unmarshal(t, &prim) == nil {
		return olField{Name: name, Type: prim}, nil
	}
	var c deltaComplex
	if err := json.Unmarshal(t, &c); err != nil {
		return olField{}, err
	}
	f := olField{Name: name, Type: c.Type}
	var err error
	switch c.Type {
	case "struct":
		f.Fields, err = structFields(c.Fields)
	case "array":
		var el olField
		if el, err = fieldOf("_element", c.ElementType); err == nil && len(c.ElementType) > 0 {
			f.Fields = []olField{el}
		}
	case "map":
		var k, v olField
		if k, err = fieldOf("key", c.KeyType); err == nil {
			if v, err = fieldOf("value", c.ValueType); err == nil {
				f.Fields = []olField{k, v}
			}
		}
	default:
		err = fmt.Errorf("unknown type %q", c.Type)
	}
	return f, err
}
