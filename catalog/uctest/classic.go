package uctest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

func (s *Server) classicRoutes() {
	m := s.mux
	m.HandleFunc("POST "+basePath+"/catalogs", s.handleCreateCatalog)
	m.HandleFunc("GET "+basePath+"/catalogs", s.handleListCatalogs)
	m.HandleFunc("GET "+basePath+"/catalogs/{name}", s.handleGetCatalog)
	m.HandleFunc("DELETE "+basePath+"/catalogs/{name}", s.handleDeleteCatalog)
	m.HandleFunc("DELETE "+basePath+"/schemas/{full_name}", s.handleDeleteSchema)
	m.HandleFunc("POST "+basePath+"/schemas", s.handleCreateSchema)
	m.HandleFunc("GET "+basePath+"/schemas", s.handleListSchemas)
	m.HandleFunc("GET "+basePath+"/schemas/{full_name}", s.handleGetSchema)
	m.HandleFunc("POST "+basePath+"/tables", s.handleClassicCreateTable)
	m.HandleFunc("GET "+basePath+"/tables", s.handleListTables)
	m.HandleFunc("GET "+basePath+"/tables/{full_name}", s.handleGetTable)
	m.HandleFunc("DELETE "+basePath+"/tables/{full_name}", s.handleClassicDeleteTable)
}

func classicAlreadyExists(code, format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, "AlreadyExistsException", code, format, args...)
}

type namedInfo struct {
	Name       string            `json:"name"`
	Comment    *string           `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

func (s *Server) catalogInfo(c *catalogEntry) map[string]any {
	m := map[string]any{"name": c.name, "id": c.id, "created_at": c.createdAt, "properties": nonNil(c.properties)}
	if c.comment != "" {
		m["comment"] = c.comment
	}
	return m
}

func (s *Server) schemaInfo(c *catalogEntry, sc *schemaEntry) map[string]any {
	m := map[string]any{"name": sc.name, "catalog_name": c.name, "full_name": c.name + "." + sc.name,
		"schema_id": sc.id, "created_at": sc.createdAt, "properties": nonNil(sc.properties)}
	if sc.comment != "" {
		m["comment"] = sc.comment
	}
	return m
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func (s *Server) handleCreateCatalog(w http.ResponseWriter, r *http.Request) {
	var req namedInfo
	if !decodeBody(w, r, &req) {
		return
	}
	if aerr := checkObjectName(req.Name); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.catalogs[req.Name]; ok {
		writeError(w, r, classicAlreadyExists("CATALOG_ALREADY_EXISTS", "Catalog already exists: %s", req.Name))
		return
	}
	c := s.addCatalogLocked(req.Name, deref(req.Comment), req.Properties)
	writeJSON(w, http.StatusOK, s.catalogInfo(c))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// page applies the server's paging (§7.1) to sorted names: size
// min(max_results,100) (0/absent: 100), names after page_token, and a token
// whenever the page is full.
func page(r *http.Request, names []string) ([]string, *string, *apiError) {
	size := 100
	if v := r.URL.Query().Get("max_results"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, nil, invalid("maxResults must be greater than or equal to 0")
		}
		if n > 0 && n < size {
			size = n
		}
	}
	sort.Strings(names)
	token := r.URL.Query().Get("page_token")
	start := 0
	if token != "" {
		start = sort.SearchStrings(names, token)
		if start < len(names) && names[start] == token {
			start++
		}
	}
	out := names[start:]
	if len(out) > size {
		out = out[:size]
	}
	var next *string
	if len(out) == size {
		last := out[len(out)-1]
		next = &last
	}
	return out, next, nil
}

func (s *Server) handleListCatalogs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, next, aerr := page(r, sortedKeys(s.catalogs))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	items := []any{}
	for _, n := range names {
		items = append(items, s.catalogInfo(s.catalogs[n]))
	}
	resp := map[string]any{"catalogs": items}
	if next != nil {
		resp["next_page_token"] = *next
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleGetCatalog(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.catalogs[r.PathValue("name")]
	if !ok {
		writeError(w, r, catalogNotFound(r.PathValue("name")))
		return
	}
	writeJSON(w, http.StatusOK, s.catalogInfo(c))
}

func (s *Server) handleCreateSchema(w http.ResponseWriter, r *http.Request) {
	var req struct {
		namedInfo
		CatalogName string `json:"catalog_name"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if aerr := checkObjectName(req.Name); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.catalogs[req.CatalogName]
	if !ok {
		writeError(w, r, catalogNotFound(req.CatalogName))
		return
	}
	if _, ok := c.schemas[req.Name]; ok {
		writeError(w, r, classicAlreadyExists("SCHEMA_ALREADY_EXISTS", "Schema already exists: %s", req.Name))
		return
	}
	sc := s.addSchemaLocked(c, req.Name, deref(req.Comment), req.Properties)
	writeJSON(w, http.StatusOK, s.schemaInfo(c, sc))
}

func (s *Server) handleListSchemas(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cn := r.URL.Query().Get("catalog_name")
	c, ok := s.catalogs[cn]
	if !ok {
		writeError(w, r, catalogNotFound(cn))
		return
	}
	names, next, aerr := page(r, sortedKeys(c.schemas))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	items := []any{}
	for _, n := range names {
		items = append(items, s.schemaInfo(c, c.schemas[n]))
	}
	resp := map[string]any{"schemas": items}
	if next != nil {
		resp["next_page_token"] = *next
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleGetSchema(w http.ResponseWriter, r *http.Request) {
	full := r.PathValue("full_name")
	cn, sn, _ := strings.Cut(full, ".")
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, aerr := s.lookupSchema(cn, sn)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, s.schemaInfo(s.catalogs[cn], sc))
}

// tableInfo is the classic TableInfo (§7.2).
func tableInfo(t *Table) map[string]any {
	cols := []any{}
	for _, c := range t.classicCols {
		cols = append(cols, c)
	}
	if !t.ColumnsCorrupt && t.classicCols == nil {
		for i, f := range t.Columns.Fields {
			tj, _ := json.Marshal(f.wire(camel))
			c := map[string]any{
				"name": f.Name, "type_text": f.Type.typeText(), "type_json": string(tj),
				"type_name": f.Type.typeName(), "position": i, "nullable": f.Nullable,
			}
			if cm, ok := f.Metadata["comment"].(string); ok {
				c["comment"] = cm
			}
			for pi, p := range t.PartitionColumns {
				if strings.EqualFold(p, f.Name) {
					c["partition_index"] = pi
				}
			}
			cols = append(cols, c)
		}
	}
	props := make(map[string]string, len(t.Properties))
	for k, v := range t.Properties {
		props[k] = v
	}
	m := map[string]any{
		"name": t.Name, "catalog_name": t.Catalog, "schema_name": t.Schema, "table_type": t.Type,
		"data_source_format": t.Format, "columns": cols, "storage_location": t.Location,
		"properties": props, "created_at": t.CreatedTime, "updated_at": t.UpdatedTime, "table_id": t.UUID,
	}
	if t.Comment != nil {
		m["comment"] = *t.Comment
	}
	return m
}

func (s *Server) handleListTables(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, aerr := s.lookupSchema(q.Get("catalog_name"), q.Get("schema_name"))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	names, next, aerr := page(r, sortedKeys(sc.tables))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	items := []any{}
	for _, n := range names {
		items = append(items, tableInfo(sc.tables[n]))
	}
	resp := map[string]any{"tables": items}
	if next != nil {
		resp["next_page_token"] = *next
	}
	writeJSON(w, http.StatusOK, resp)
}

func splitFull(full string) (string, string, string, *apiError) {
	parts := strings.Split(full, ".")
	if len(parts) != 3 {
		return "", "", "", invalid("Invalid table name: %s", full)
	}
	return parts[0], parts[1], parts[2], nil
}

func (s *Server) handleGetTable(w http.ResponseWriter, r *http.Request) {
	c, sc, tn, aerr := splitFull(r.PathValue("full_name"))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, aerr := s.lookup(c, sc, tn)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, tableInfo(t))
}

func (s *Server) handleClassicDeleteTable(w http.ResponseWriter, r *http.Request) {
	c, sc, tn, aerr := splitFull(r.PathValue("full_name"))
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, aerr := s.lookup(c, sc, tn); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	delete(s.catalogs[c].schemas[sc].tables, tn)
	w.WriteHeader(http.StatusOK) // the server sends an empty body
}

func (s *Server) handleDeleteCatalog(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.catalogs[name]
	if !ok {
		writeError(w, r, catalogNotFound(name))
		return
	}
	if len(c.schemas) > 0 && r.URL.Query().Get("force") != "true" {
		writeError(w, r, errf(http.StatusBadRequest, "InvalidParameterValueException", "FAILED_PRECONDITION", "Cannot delete catalog with schemas: %s", name))
		return
	}
	delete(s.catalogs, name)
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) handleDeleteSchema(w http.ResponseWriter, r *http.Request) {
	cn, sn, _ := strings.Cut(r.PathValue("full_name"), ".")
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, aerr := s.lookupSchema(cn, sn)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	if len(sc.tables) > 0 && r.URL.Query().Get("force") != "true" {
		writeError(w, r, errf(http.StatusBadRequest, "InvalidParameterValueException", "FAILED_PRECONDITION", "Cannot delete schema with tables: %s.%s", cn, sn))
		return
	}
	delete(s.catalogs[cn].schemas, sn)
	writeJSON(w, http.StatusOK, map[string]any{})
}
