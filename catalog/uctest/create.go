package uctest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// createRequest is DeltaCreateTableRequest.
type createRequest struct {
	Name             *string           `json:"name"`
	Location         *string           `json:"location"`
	TableType        *string           `json:"table-type"`
	Comment          *string           `json:"comment"`
	Columns          json.RawMessage   `json:"columns"`
	PartitionColumns []string          `json:"partition-columns"`
	Protocol         *wireProtocol     `json:"protocol"`
	Properties       map[string]string `json:"properties"`
	DomainMetadata   json.RawMessage   `json:"domain-metadata"`
	LastCommitTsMs   *int64            `json:"last-commit-timestamp-ms"`
	Uniform          map[string]any    `json:"uniform"`
}

// domainUpdates is DeltaDomainMetadataUpdates.
type domainUpdates struct {
	Clustering  *[][]string // delta.clustering.clusteringColumns
	RowTracking *int64      // delta.rowTracking.rowIdHighWaterMark
}

const (
	domainClustering  = "delta.clustering"
	domainRowTracking = "delta.rowTracking"
)

func parseDomainUpdates(raw json.RawMessage, what string) (domainUpdates, *apiError) {
	var du domainUpdates
	var m map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return du, invalid("%s requires an updates block.", what)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return du, invalid("%s: invalid domain metadata: %v", what, err)
	}
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch k {
		case domainClustering:
			var c struct {
				ClusteringColumns *[][]string `json:"clusteringColumns"`
			}
			if err := json.Unmarshal(v, &c); err != nil || c.ClusteringColumns == nil {
				return du, invalid("%s: delta.clustering requires clusteringColumns", what)
			}
			du.Clustering = c.ClusteringColumns
		case domainRowTracking:
			var rt struct {
				HWM *int64 `json:"rowIdHighWaterMark"`
			}
			if err := json.Unmarshal(v, &rt); err != nil || rt.HWM == nil {
				return du, invalid("%s: delta.rowTracking requires rowIdHighWaterMark", what)
			}
			du.RowTracking = rt.HWM
		default:
			return du, invalid("Unknown domain in %s: %s", what, k)
		}
	}
	if du.Clustering == nil && du.RowTracking == nil {
		return du, invalid("%s requires at least one domain entry. Supported domains: [delta.clustering, delta.rowTracking]", what)
	}
	return du, nil
}

// applyDomains writes the domain projection (§4.6) into props.
func (s *Server) applyDomains(props map[string]string, du domainUpdates) {
	if du.Clustering != nil {
		cols := *du.Clustering
		if cols == nil {
			cols = [][]string{}
		}
		b, _ := json.Marshal(cols)
		props[s.cfg.clusteringKey] = string(b)
	}
	if du.RowTracking != nil {
		props["delta.rowTracking.rowIdHighWaterMark"] = strconv.FormatInt(*du.RowTracking, 10)
	}
}

// applyProtocol replaces the protocol projection in props (§4.2 step 2).
func applyProtocol(props map[string]string, p *wireProtocol) {
	for k := range props {
		if strings.HasPrefix(k, "delta.feature.") {
			delete(props, k)
		}
	}
	props["delta.minReaderVersion"] = strconv.Itoa(*p.MinReaderVersion)
	props["delta.minWriterVersion"] = strconv.Itoa(*p.MinWriterVersion)
	for _, f := range p.ReaderFeatures {
		props["delta.feature."+f] = "supported"
	}
	for _, f := range p.WriterFeatures {
		props["delta.feature."+f] = "supported"
	}
}

func checkProtocol(p *wireProtocol, what string) *apiError {
	if p == nil {
		if what == "set-protocol" {
			return invalid("set-protocol requires a protocol.")
		}
		return invalid("protocol is required.")
	}
	if p.MinReaderVersion == nil {
		return invalid("%s: protocol.min-reader-version is required", what)
	}
	if p.MinWriterVersion == nil {
		return invalid("%s: protocol.min-writer-version is required", what)
	}
	return nil
}

// checkContract is the catalog-managed contract (§4.5). hasClustering and
// hasRowTracking say whether the table carries those domains.
func checkContract(p *wireProtocol, props map[string]string, hasClustering, hasRowTracking bool) *apiError {
	for _, f := range p.ReaderFeatures {
		if !slices.Contains(p.WriterFeatures, f) {
			return invalid("Feature '%s' is in reader-features but not writer-features. Per the Delta protocol, every reader-feature must also be a writer-feature.", f)
		}
	}
	if *p.MinReaderVersion < 3 {
		return invalid("MANAGED table minReaderVersion must be at least 3 (got %d).", *p.MinReaderVersion)
	}
	if *p.MinWriterVersion < 7 {
		return invalid("MANAGED table minWriterVersion must be at least 7 (got %d).", *p.MinWriterVersion)
	}
	for _, f := range requiredReaderFeatures {
		if !slices.Contains(p.ReaderFeatures, f) {
			return invalid("MANAGED table missing required reader-feature '%s'.", f)
		}
	}
	for _, f := range requiredWriterFeatures {
		if !slices.Contains(p.WriterFeatures, f) {
			return invalid("MANAGED table missing required writer-feature '%s'.", f)
		}
	}
	if err := checkDomainFeatures(p.WriterFeatures, hasClustering, hasRowTracking); err != nil {
		return err
	}
	for _, kv := range requiredProperties {
		if v, ok := props[kv[0]]; !ok || v != kv[1] {
			got := "null"
			if ok {
				got = v
			}
			return invalid("MANAGED table required property '%s' must be '%s' (got '%s').", kv[0], kv[1], got)
		}
	}
	if strings.TrimSpace(props["io.unitycatalog.tableId"]) == "" {
		return invalid("MANAGED table required property 'io.unitycatalog.tableId' is missing.")
	}
	return nil
}

func checkDomainFeatures(writerFeatures []string, hasClustering, hasRowTracking bool) *apiError {
	if hasClustering && !slices.Contains(writerFeatures, "clustering") {
		return invalid("domain-metadata.delta.clustering requires the 'clustering' writer feature.")
	}
	if hasRowTracking && !slices.Contains(writerFeatures, "rowTracking") {
		return invalid("domain-metadata.delta.rowTracking requires the 'rowTracking' writer feature.")
	}
	return nil
}

// featuresFromProps lists the delta.feature.* keys (reader and writer merged).
func featuresFromProps(props map[string]string) []string {
	var fs []string
	for k, v := range props {
		if f, ok := strings.CutPrefix(k, "delta.feature."); ok && v == "supported" {
			fs = append(fs, f)
		}
	}
	return fs
}

// resolvePartitions checks partition names against cols (case-insensitive,
// no duplicates) and returns them spelled as the columns are.
func resolvePartitions(cols StructType, parts []string) ([]string, *apiError) {
	out := make([]string, 0, len(parts))
	seen := map[string]bool{}
	for _, p := range parts {
		i := cols.fieldIndex(p)
		low := strings.ToLower(p)
		if seen[low] {
			return nil, invalid("partition-columns contains duplicate entry (case-insensitive): %s", p)
		}
		if i < 0 {
			return nil, invalid("partition-columns references unknown column: %s", p)
		}
		seen[low] = true
		out = append(out, cols.Fields[i].Name)
	}
	return out, nil
}

func parseColumns(raw json.RawMessage) (StructType, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return StructType{}, invalid("columns is required.")
	}
	v, err := decodeAny(raw)
	if err != nil {
		return StructType{}, invalid("Invalid columns: %v", err)
	}
	st, err := parseStruct(v, "columns", kebab)
	if err != nil {
		return StructType{}, invalid("%s", err.Error())
	}
	return st, nil
}

func (s *Server) handleCreateTable(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !decodeBody(w, r, &req) {
		return
	}
	t, aerr := s.createTable(r.PathValue("catalog"), r.PathValue("schema"), &req)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) createTable(cat, sch string, req *createRequest) (map[string]any, *apiError) {
	// Validation order: name, location, column shape, table-type, protocol,
	// last-commit-timestamp-ms (§2.3).
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return nil, invalid("Table name is required.")
	}
	if req.Location == nil || strings.TrimSpace(*req.Location) == "" {
		return nil, invalid("Table location is required.")
	}
	cols, aerr := parseColumns(req.Columns)
	if aerr != nil {
		return nil, aerr
	}
	if req.TableType == nil || (*req.TableType != "MANAGED" && *req.TableType != "EXTERNAL") {
		return nil, invalid("table-type is required.")
	}
	if aerr := checkProtocol(req.Protocol, "createTable"); aerr != nil {
		return nil, aerr
	}
	if req.LastCommitTsMs == nil {
		return nil, invalid("last-commit-timestamp-ms is required.")
	}
	var du domainUpdates
	if len(req.DomainMetadata) > 0 && string(req.DomainMetadata) != "null" {
		if du, aerr = parseDomainUpdates(req.DomainMetadata, "domain-metadata"); aerr != nil {
			return nil, aerr
		}
	}
	managed := *req.TableType == "MANAGED"
	if managed {
		// MANAGED only: the catalog-managed contract, before any lookup.
		if aerr := checkContract(req.Protocol, req.Properties, du.Clustering != nil, du.RowTracking != nil); aerr != nil {
			return nil, aerr
		}
	}
	if aerr := checkUniformConsistency(req.Properties, req.Uniform != nil); aerr != nil {
		return nil, aerr
	}
	ice, aerr := parseUniform(req.Uniform)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := checkUniformCreate(ice, normalizeLocation(*req.Location)); aerr != nil {
		return nil, aerr
	}
	parts, aerr := resolvePartitions(cols, req.PartitionColumns)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := checkObjectName(*req.Name); aerr != nil {
		return nil, aerr
	}
	loc := normalizeLocation(*req.Location)

	s.mu.Lock()
	defer s.mu.Unlock()
	sc, aerr := s.lookupSchema(cat, sch)
	if aerr != nil {
		return nil, aerr
	}
	if _, taken := sc.tables[*req.Name]; taken {
		return nil, tableExists(cat + "." + sch + "." + *req.Name)
	}
	props := map[string]string{}
	for k, v := range req.Properties {
		props[k] = v
	}
	id := newUUID()
	var st *stagingEntry
	if managed {
		st = s.staging[loc]
		if st == nil {
			return nil, errf(http.StatusNotFound, "NoSuchTableException", "TABLE_NOT_FOUND", "Staging table not found: %s", loc)
		}
		if st.finalized {
			return nil, errf(http.StatusBadRequest, "InvalidParameterValueException", "FAILED_PRECONDITION", "Staging table already committed: %s", loc)
		}
		if props["io.unitycatalog.tableId"] != st.id {
			return nil, invalid("the table id (%s) does not match the properties io.unitycatalog.tableId(%s).", st.id, props["io.unitycatalog.tableId"])
		}
		id = st.id
	} else {
		if bareRoot(loc) {
			return nil, invalid("External table storage location must include a non-empty path prefix: %s", *req.Location)
		}
		if strings.HasPrefix(loc+"/", s.cfg.managedRoot+"/") || strings.HasPrefix(s.cfg.managedRoot+"/", loc+"/") {
			return nil, invalid("Location %s overlaps managed storage %s", loc, s.cfg.managedRoot)
		}
	}
	applyProtocol(props, req.Protocol)
	s.applyDomains(props, du)
	props["delta.lastCommitTimestamp"] = strconv.FormatInt(*req.LastCommitTsMs, 10)
	props["delta.lastUpdateVersion"] = "0"
	now := s.nowMs()
	t := &Table{
		Catalog: cat, Schema: sch, Name: *req.Name, UUID: id, Type: *req.TableType, Format: "DELTA",
		Location: loc, Comment: req.Comment, Columns: cols, PartitionColumns: parts, Properties: props,
		CreatedTime: now, UpdatedTime: now - 1,
	}
	if ice != nil {
		t.Uniform = storedUniform(ice)
	}
	if aerr := checkWidths(t); aerr != nil {
		return nil, aerr
	}
	s.touch(t)
	if st != nil {
		st.finalized = true
	}
	sc.tables[t.Name] = t
	return s.loadResponse(t), nil
}

var objectNameRE = regexp.MustCompile(`^[a-zA-Z0-9_@-]+$`)

// checkObjectName is the server's rule for catalog, schema and table names.
func checkObjectName(name string) *apiError {
	switch {
	case name == "":
		return invalid("Name cannot be empty")
	case len(name) > 255:
		return invalid("Name cannot be longer than 255 characters")
	case !objectNameRE.MatchString(name):
		return invalid("Name cannot contain a period, space, forward-slash, or control characters")
	}
	return nil
}

func tableExists(full string) *apiError {
	return errf(http.StatusConflict, "AlreadyExistsException", "TABLE_ALREADY_EXISTS", "Table already exists: %s", full)
}
