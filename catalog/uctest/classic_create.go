package uctest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// classicColumn is ColumnInfo as a create request carries it.
type classicColumn struct {
	Name           string  `json:"name"`
	TypeText       string  `json:"type_text"`
	TypeJSON       string  `json:"type_json"`
	TypeName       string  `json:"type_name"`
	Nullable       *bool   `json:"nullable"`
	PartitionIndex *int    `json:"partition_index"`
	Comment        *string `json:"comment"`
}

func (s *Server) handleClassicCreateTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name             string            `json:"name"`
		CatalogName      string            `json:"catalog_name"`
		SchemaName       string            `json:"schema_name"`
		TableType        string            `json:"table_type"`
		DataSourceFormat string            `json:"data_source_format"`
		Columns          []classicColumn   `json:"columns"`
		StorageLocation  string            `json:"storage_location"`
		Comment          *string           `json:"comment"`
		Properties       map[string]string `json:"properties"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Name) == "" {
		writeError(w, r, invalid("name is required"))
		return
	}
	if req.TableType != "EXTERNAL" {
		writeError(w, r, invalid("Only EXTERNAL tables can be created with POST /tables (use the Delta API staging flow for MANAGED)"))
		return
	}
	if strings.TrimSpace(req.StorageLocation) == "" {
		writeError(w, r, invalid("storage_location is required for EXTERNAL tables"))
		return
	}
	format := req.DataSourceFormat
	if format == "" {
		format = "DELTA"
	}
	t := &Table{Catalog: req.CatalogName, Schema: req.SchemaName, Name: req.Name, UUID: newUUID(), Type: "EXTERNAL",
		Format: format, Location: normalizeLocation(req.StorageLocation), Comment: req.Comment, Properties: map[string]string{}}
	for k, v := range req.Properties {
		t.Properties[k] = v
	}
	if aerr := checkObjectName(req.Name); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	type part struct {
		idx  int
		name string
	}
	var parts []part
	for i, c := range req.Columns {
		f, aerr := classicField(c, format == "DELTA")
		if aerr != nil {
			writeError(w, r, aerr)
			return
		}
		t.Columns.Fields = append(t.Columns.Fields, f)
		if format != "DELTA" {
			t.classicCols = append(t.classicCols, classicColumnInfo(c, i))
		}
		if c.PartitionIndex != nil {
			parts = append(parts, part{*c.PartitionIndex, c.Name})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].idx < parts[j].idx })
	for i, p := range parts {
		if p.idx != i { // non-contiguous indices: the server answers []
			t.PartitionColumns = nil
			break
		}
		t.PartitionColumns = append(t.PartitionColumns, p.name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, aerr := s.lookupSchema(req.CatalogName, req.SchemaName)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	if _, ok := sc.tables[req.Name]; ok {
		writeError(w, r, classicAlreadyExists("TABLE_ALREADY_EXISTS", "Table already exists: %s", t.FullName()))
		return
	}
	now := s.nowMs()
	t.CreatedTime, t.UpdatedTime = now, now-1
	s.touch(t)
	sc.tables[t.Name] = t
	writeJSON(w, http.StatusOK, tableInfo(t))
}

// classicField checks a create request's ColumnInfo the way the server does
// (type_json must be Spark StructField JSON naming the same column; for
// DELTA the full Delta type check, for other formats only its shape) and
// returns the field it describes.
func classicField(c classicColumn, delta bool) (Field, *apiError) {
	bad := func(format string, args ...any) *apiError {
		return invalid("Invalid type_json for column %s: %s", c.Name, fmt.Sprintf(format, args...))
	}
	if c.TypeText == "" {
		return Field{}, invalid("type_text is required for column %s.", c.Name)
	}
	if c.TypeJSON == "" {
		return Field{}, bad("Column %s has null/empty typeJson", c.Name)
	}
	v, err := decodeAny([]byte(c.TypeJSON))
	if err != nil {
		return Field{}, bad("Failed to parse typeJson for column %s: %s", c.Name, c.TypeJSON)
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return Field{}, bad("Failed to parse typeJson for column %s: %s", c.Name, c.TypeJSON)
	}
	for _, k := range []string{"name", "type", "nullable", "metadata"} {
		if m[k] == nil {
			return Field{}, bad("type_json.%s is required.", k)
		}
	}
	f, err := parseField(v, "type_json", camel)
	if err != nil && delta {
		return Field{}, bad("%s", err.Error())
	}
	if err != nil { // a type Delta does not have (char(n), ...): keep the shape only
		name, _ := m["name"].(string)
		nullable, _ := m["nullable"].(bool)
		md, _ := m["metadata"].(map[string]any)
		f = Field{Name: name, Type: DataType{Name: "string"}, Nullable: nullable, Metadata: md}
	}
	if f.Name != c.Name {
		return Field{}, bad("field name %s does not match column name %s", f.Name, c.Name)
	}
	if c.Nullable != nil && *c.Nullable != f.Nullable {
		return Field{}, bad("field nullable %v does not match column nullable %v", f.Nullable, *c.Nullable)
	}
	return f, nil
}

// classicColumnInfo is the ColumnInfo a non-Delta table shows, as created.
func classicColumnInfo(c classicColumn, pos int) map[string]any {
	m := map[string]any{"name": c.Name, "type_text": strings.ToLower(c.TypeText), "type_json": c.TypeJSON, "position": pos}
	if c.TypeName != "" {
		m["type_name"] = c.TypeName
	}
	if c.Nullable != nil {
		m["nullable"] = *c.Nullable
	}
	if c.PartitionIndex != nil {
		m["partition_index"] = *c.PartitionIndex
	}
	if c.Comment != nil {
		m["comment"] = *c.Comment
	}
	return m
}
