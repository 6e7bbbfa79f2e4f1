package uctest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const deltaBase = basePath + "/delta/v1"

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET "+deltaBase+"/config", s.handleConfig)
	m.HandleFunc("POST "+deltaBase+"/catalogs/{catalog}/schemas/{schema}/staging-tables", s.handleCreateStaging)
	m.HandleFunc("POST "+deltaBase+"/catalogs/{catalog}/schemas/{schema}/tables", s.handleCreateTable)
	m.HandleFunc(deltaBase+"/catalogs/{catalog}/schemas/{schema}/tables/{table}", s.handleDeltaTable)
	m.HandleFunc("GET "+deltaBase+"/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials", s.handleTableCredentials)
	m.HandleFunc("POST "+deltaBase+"/catalogs/{catalog}/schemas/{schema}/tables/{table}/metrics", s.handleMetrics)
	m.HandleFunc("POST "+deltaBase+"/catalogs/{catalog}/schemas/{schema}/tables/{table}/rename", s.handleRename)
	m.HandleFunc("GET "+deltaBase+"/staging-tables/{table_id}/credentials", s.handleStagingCredentials)
	s.classicRoutes()
	// No handler (e.g. the advertised GET /v1/temporary-path-credentials).
	m.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeNoRoute(w, http.StatusNotFound) })
}

// deltaEndpoints is what the server advertises: the 11 of the spec's example
// plus the list-tables endpoint it has no handler for (§2.1).
var deltaEndpoints = []string{
	"POST /v1/catalogs/{catalog}/schemas/{schema}/staging-tables",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"DELETE /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"HEAD /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/rename",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/metrics",
	"GET /v1/staging-tables/{table_id}/credentials",
	"GET /v1/temporary-path-credentials",
}

func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	c := r.URL.Query().Get("catalog")
	if strings.TrimSpace(c) == "" {
		writeError(w, r, invalid("Must supply a proper catalog in catalog parameter."))
		return
	}
	s.mu.Lock()
	_, ok := s.catalogs[c]
	s.mu.Unlock()
	if !ok {
		writeError(w, r, catalogNotFound(c))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": append([]string(nil), deltaEndpoints...), "protocol-version": "1.0"})
}

// wireProtocol is DeltaProtocol.
type wireProtocol struct {
	MinReaderVersion *int     `json:"min-reader-version"`
	MinWriterVersion *int     `json:"min-writer-version"`
	ReaderFeatures   []string `json:"reader-features,omitempty"`
	WriterFeatures   []string `json:"writer-features,omitempty"`
}

var (
	requiredReaderFeatures = []string{"catalogManaged", "deletionVectors", "v2Checkpoint", "vacuumProtocolCheck"}
	requiredWriterFeatures = []string{"catalogManaged", "v2Checkpoint", "vacuumProtocolCheck", "deletionVectors", "inCommitTimestamp"}
	requiredProperties     = [][2]string{
		{"delta.enableDeletionVectors", "true"},
		{"delta.checkpointPolicy", "v2"},
		{"delta.enableInCommitTimestamps", "true"},
		{"delta.checkpoint.writeStatsAsStruct", "true"},
		{"delta.checkpoint.writeStatsAsJson", "true"},
	}
)

func (s *Server) handleCreateStaging(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name string `json:"name"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Name) == "" {
		writeError(w, r, invalid("Staging table name is required."))
		return
	}
	if aerr := checkObjectName(req.Name); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	cat, sch := r.PathValue("catalog"), r.PathValue("schema")
	s.mu.Lock()
	sc, aerr := s.lookupSchema(cat, sch)
	if aerr == nil {
		if _, taken := sc.tables[req.Name]; taken {
			aerr = tableExists(req.Name) // the staging path names the table alone
		}
	}
	if aerr != nil {
		s.mu.Unlock()
		writeError(w, r, aerr)
		return
	}
	id := newUUID()
	loc := s.cfg.managedRoot + "/tables/" + id
	s.staging[loc] = &stagingEntry{id: id, catalog: cat, schema: sch, name: req.Name, location: loc}
	cred := s.credentialLocked(loc, "READ_WRITE")
	s.mu.Unlock()
	rv, wv := 3, 7
	props := map[string]*string{"io.unitycatalog.tableId": &id}
	for _, kv := range requiredProperties {
		v := kv[1]
		props[kv[0]] = &v
	}
	str := func(v string) *string { return &v }
	writeJSON(w, http.StatusOK, map[string]any{
		"table-id":            id,
		"table-type":          "MANAGED",
		"location":            loc,
		"storage-credentials": []any{cred},
		"required-protocol":   wireProtocol{MinReaderVersion: &rv, MinWriterVersion: &wv, ReaderFeatures: requiredReaderFeatures, WriterFeatures: requiredWriterFeatures},
		"suggested-protocol": map[string]any{
			"reader-features": []string{"columnMapping"},
			"writer-features": []string{"columnMapping", "domainMetadata", "rowTracking"},
		},
		"required-properties": props,
		"suggested-properties": map[string]*string{
			"delta.columnMapping.mode":                                 str("name"),
			"delta.columnMapping.maxColumnId":                          nil,
			"delta.enableRowTracking":                                  str("true"),
			"delta.rowTracking.materializedRowIdColumnName":            nil,
			"delta.rowTracking.materializedRowCommitVersionColumnName": nil,
			"delta.randomizeFilePrefixes":                              str("true"),
			"delta.parquet.compression.codec":                          str("zstd"),
		},
	})
}

// credentialLocked builds one DeltaStorageCredential; s.mu must be held.
func (s *Server) credentialLocked(prefix, op string) map[string]any {
	cfg := map[string]string{}
	if s.credConfig != nil {
		for k, v := range s.credConfig(prefix) {
			cfg[k] = v
		}
	}
	return map[string]any{
		"prefix":             prefix,
		"operation":          op,
		"expiration-time-ms": s.cfg.now().Add(time.Hour).UnixMilli(),
		"config":             cfg,
	}
}

func mustBody(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// decodeBody decodes the JSON request body into v; when it does not parse
// it answers 400 "Invalid request body", as the server does, and says false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.Unmarshal(mustBody(r), v); err != nil {
		writeError(w, r, invalid("Invalid request body: %v", err))
		return false
	}
	return true
}

// normalizeLocation mirrors NormalizedURL: trailing slashes stripped,
// repeated slashes collapsed, local paths turned into file:///… URLs.
func normalizeLocation(loc string) string {
	loc = strings.TrimSpace(loc)
	if strings.HasPrefix(loc, "/") {
		loc = "file://" + loc
	}
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		if strings.HasPrefix(loc, "file:/") {
			scheme, rest = "file", "/"+strings.TrimLeft(strings.TrimPrefix(loc, "file:"), "/")
		} else {
			return strings.TrimRight(loc, "/")
		}
	}
	if scheme == "file" {
		// file://host/path is not used; file:///path keeps its empty host.
		rest = "/" + strings.TrimLeft(rest, "/")
	}
	rest = multiSlash.ReplaceAllString(rest, "/")
	rest = strings.TrimRight(rest, "/")
	if scheme == "file" {
		return "file://" + rest
	}
	return scheme + "://" + rest
}

var multiSlash = regexp.MustCompile(`/{2,}`)

// bareRoot reports a cloud location that is a bucket root (s3, gs, abfs[s]).
func bareRoot(loc string) bool {
	u, err := url.Parse(loc)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "s3", "gs", "abfs", "abfss":
	default:
		return false
	}
	p := strings.Trim(u.Path, "/")
	return p == "" || path.Clean("/"+p) == "/"
}

func (s *Server) handleDeltaTable(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.handleLoad(w, r)
	case http.MethodPost:
		s.handleUpdate(w, r)
	case http.MethodDelete:
		s.handleDeltaDelete(w, r)
	case http.MethodHead:
		s.handleHead(w, r)
	default:
		writeError(w, r, &apiError{Status: http.StatusMethodNotAllowed, Type: "BadRequestException", Message: "method not allowed"})
	}
}

func pathTable(r *http.Request) (string, string, string) {
	return r.PathValue("catalog"), r.PathValue("schema"), r.PathValue("table")
}

func (s *Server) handleLoad(w http.ResponseWriter, r *http.Request) {
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	t, aerr := s.lookup(c, sc, tn)
	var resp map[string]any
	if aerr == nil {
		if t.Format != "DELTA" {
			aerr = unsupportedFormat(t.FullName())
		} else {
			resp = s.loadResponse(t)
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// loadResponse is DeltaLoadTableResponse for t (§2.4).
func (s *Server) loadResponse(t *Table) map[string]any {
	cols := t.Columns.wire(kebab)
	if t.ColumnsCorrupt {
		cols = wireStruct{Type: "struct", Fields: []wireField{}}
	}
	props := make(map[string]string, len(t.Properties))
	for k, v := range t.Properties {
		props[k] = v
	}
	parts := append([]string{}, t.PartitionColumns...)
	md := map[string]any{
		"etag":              t.Etag,
		"table-type":        t.Type,
		"table-uuid":        t.UUID,
		"location":          t.Location,
		"created-time":      t.CreatedTime,
		"updated-time":      t.UpdatedTime,
		"columns":           cols,
		"partition-columns": parts,
		"properties":        props,
	}
	if v, err := strconv.ParseInt(t.Properties["delta.lastUpdateVersion"], 10, 64); err == nil {
		md["last-commit-version"] = v
	}
	if v, err := strconv.ParseInt(t.Properties["delta.lastCommitTimestamp"], 10, 64); err == nil {
		md["last-commit-timestamp-ms"] = v
	}
	// The server's generated model starts "commits" as an empty list, so
	// EXTERNAL tables answer "commits": [] (and no latest-table-version).
	resp := map[string]any{"metadata": md, "commits": []any{}}
	if t.Type == "MANAGED" {
		commits := []any{}
		var latest int64
		for i := len(t.Commits) - 1; i >= 0; i-- {
			c := t.Commits[i]
			if c.Version > latest {
				latest = c.Version
			}
			if c.Backfilled {
				continue
			}
			commits = append(commits, commitJSON(c))
		}
		resp["commits"] = commits
		resp["latest-table-version"] = latest
	}
	if t.Uniform != nil {
		resp["uniform"] = t.Uniform
	}
	return resp
}

func (s *Server) handleHead(w http.ResponseWriter, r *http.Request) {
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	_, aerr := s.lookup(c, sc, tn)
	s.mu.Unlock()
	if aerr != nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleDeltaDelete(w http.ResponseWriter, r *http.Request) {
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	_, aerr := s.lookup(c, sc, tn)
	if aerr == nil {
		delete(s.catalogs[c].schemas[sc].tables, tn)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleTableCredentials(w http.ResponseWriter, r *http.Request) {
	op := r.URL.Query().Get("operation")
	if op != "READ" && op != "READ_WRITE" {
		writeError(w, r, invalid("operation must be READ or READ_WRITE, got %q", op))
		return
	}
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	t, aerr := s.lookup(c, sc, tn)
	var cred map[string]any
	if aerr == nil {
		cred = s.credentialLocked(t.Location, op)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage-credentials": []any{cred}})
}

func (s *Server) handleStagingCredentials(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("table_id")
	s.mu.Lock()
	var cred map[string]any
	for _, st := range s.staging {
		if st.id == id {
			cred = s.credentialLocked(st.location, "READ_WRITE")
		}
	}
	s.mu.Unlock()
	if cred == nil {
		writeError(w, r, errf(http.StatusNotFound, "NoSuchTableException", "TABLE_NOT_FOUND", "Staging table not found with id: %s", id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage-credentials": []any{cred}})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TableID string `json:"table-id"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	t, aerr := s.lookup(c, sc, tn)
	if aerr == nil && !strings.EqualFold(t.UUID, req.TableID) {
		aerr = invalid("table-id %s does not match table %s.", req.TableID, t.FullName())
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleRename(w http.ResponseWriter, r *http.Request) {
	var req struct {
		NewName string `json:"new-name"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.NewName) == "" {
		writeError(w, r, invalid("New table name is required."))
		return
	}
	if aerr := checkObjectName(req.NewName); aerr != nil {
		writeError(w, r, aerr)
		return
	}
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	t, aerr := s.lookup(c, sc, tn)
	if aerr != nil && aerr.Type == "NoSuchTableException" {
		aerr.Message = "Table not found: " + tn // the rename path names the table alone
	}
	if aerr == nil && req.NewName != tn {
		tables := s.catalogs[c].schemas[sc].tables
		if _, taken := tables[req.NewName]; taken {
			aerr = tableExists(req.NewName)
		} else {
			delete(tables, tn)
			t.Name = req.NewName
			tables[req.NewName] = t
			s.touch(t)
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func commitJSON(c Commit) map[string]any {
	return map[string]any{
		"version": c.Version, "timestamp": c.Timestamp, "file-name": c.FileName,
		"file-size": c.FileSize, "file-modification-timestamp": c.FileModificationTimestamp,
	}
}
