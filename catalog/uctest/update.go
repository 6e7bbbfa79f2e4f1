package uctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// maxUnbackfilledCommits is MAX_NUM_COMMITS_PER_TABLE (§4.7).
const maxUnbackfilledCommits = 10

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

type wireCommit struct {
	Version                   *int64  `json:"version"`
	Timestamp                 *int64  `json:"timestamp"`
	FileName                  *string `json:"file-name"`
	FileSize                  *int64  `json:"file-size"`
	FileModificationTimestamp *int64  `json:"file-modification-timestamp"`
}

// updateRequest is a DeltaUpdateTableRequest after the shape checks (§3.3).
// has records which actions were present; the pointers may still be nil
// when a required field was missing (the apply step rejects that).
type updateRequest struct {
	uuid string
	etag *string
	has  map[string]bool

	setProps     map[string]string
	removals     []string
	columns      json.RawMessage
	partitions   *[]string
	protocol     *wireProtocol
	comment      *string
	domainRaw    json.RawMessage
	domainsToDel *[]string
	lastVersion  *int64
	lastTsMs     *int64
	commit       *wireCommit
	uniform      map[string]any
	publishedVer *int64
}

var actionFields = map[string][]string{
	"set-properties":                   {"updates"},
	"remove-properties":                {"removals"},
	"set-columns":                      {"columns"},
	"set-table-comment":                {"comment"},
	"add-commit":                       {"commit"},
	"set-latest-backfilled-version":    {"latest-published-version"},
	"set-protocol":                     {"protocol"},
	"set-domain-metadata":              {"updates"},
	"remove-domain-metadata":           {"domains"},
	"set-partition-columns":            {"partition-columns"},
	"update-metadata-snapshot-version": {"last-commit-version", "last-commit-timestamp-ms"},
}

// parseUpdate runs the shape checks. specViolation is called for what the
// API definition forbids but kin-openapi cannot see (discriminated subtypes).
func parseUpdate(body []byte, specViolation func(string)) (*updateRequest, *apiError) {
	var raw struct {
		Requirements []map[string]json.RawMessage `json:"requirements"`
		Updates      []map[string]json.RawMessage `json:"updates"`
	}
	if len(strings.TrimSpace(string(body))) == 0 || strings.TrimSpace(string(body)) == "null" {
		return nil, invalid("Request body is required.")
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, invalid("Invalid request body: %v", err)
	}
	if len(raw.Updates) == 0 {
		return nil, invalid("At least one update is required.")
	}
	u := &updateRequest{has: map[string]bool{}}
	hasUUID := false
	seenReq := map[string]bool{}
	for _, rq := range raw.Requirements {
		var typ string
		_ = json.Unmarshal(rq["type"], &typ)
		switch typ {
		case "assert-table-uuid", "assert-etag":
		default:
			specViolation(fmt.Sprintf("unknown requirement type %q", typ))
			return nil, invalid("Unknown requirement type: %s", typ)
		}
		if seenReq[typ] {
			return nil, invalid("At most one %s is allowed per request.", typ)
		}
		seenReq[typ] = true
		if typ == "assert-table-uuid" {
			hasUUID = true
			if err := json.Unmarshal(rq["uuid"], &u.uuid); err != nil || u.uuid == "" {
				specViolation("assert-table-uuid without uuid")
				return nil, invalid("assert-table-uuid requires a uuid.")
			}
			if !uuidRE.MatchString(u.uuid) {
				specViolation(fmt.Sprintf("assert-table-uuid uuid %q is not a UUID", u.uuid))
				return nil, invalid("Cannot deserialize value of type `java.util.UUID` from String %q: UUID has to be represented by standard 36-char representation", u.uuid)
			}
		} else {
			var e string
			if err := json.Unmarshal(rq["etag"], &e); err != nil {
				specViolation("assert-etag without etag")
				return nil, invalid("assert-etag requires an etag.")
			}
			u.etag = &e
		}
	}
	if !hasUUID {
		return nil, invalid("assert-table-uuid requirement is required.")
	}
	for _, up := range raw.Updates {
		var act string
		_ = json.Unmarshal(up["action"], &act)
		fields, known := actionFields[act]
		if !known {
			specViolation(fmt.Sprintf("unknown update action %q", act))
			return nil, invalid("Unknown update action: %s", act)
		}
		if u.has[act] {
			return nil, invalid("At most one %s is allowed per request.", act)
		}
		u.has[act] = true
		for _, f := range fields {
			if v, ok := up[f]; !ok || string(v) == "null" {
				specViolation(fmt.Sprintf("%s without %s", act, f))
			}
		}
		if err := u.decodeAction(act, up); err != nil {
			specViolation(fmt.Sprintf("%s: %v", act, err))
			return nil, invalid("Invalid %s: %v", act, err)
		}
	}
	if u.has["set-properties"] && u.has["remove-properties"] {
		var both []string
		for _, k := range u.removals {
			if _, ok := u.setProps[k]; ok {
				both = append(both, k)
			}
		}
		if len(both) > 0 {
			sort.Strings(both)
			return nil, invalid("set-properties and remove-properties overlap on keys: [%s]", strings.Join(both, ", "))
		}
	}
	if u.has["set-domain-metadata"] && u.has["remove-domain-metadata"] && u.domainsToDel != nil {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(u.domainRaw, &m)
		var both []string
		for _, d := range *u.domainsToDel {
			if _, ok := m[d]; ok {
				both = append(both, d)
			}
		}
		if len(both) > 0 {
			sort.Strings(both)
			return nil, invalid("set-domain-metadata and remove-domain-metadata overlap on domains: [%s]", strings.Join(both, ", "))
		}
	}
	return u, nil
}

func (u *updateRequest) decodeAction(act string, m map[string]json.RawMessage) error {
	get := func(k string, dst any) error {
		v, ok := m[k]
		if !ok || string(v) == "null" {
			return nil
		}
		return json.Unmarshal(v, dst)
	}
	switch act {
	case "set-properties":
		return get("updates", &u.setProps)
	case "remove-properties":
		return get("removals", &u.removals)
	case "set-columns":
		u.columns = m["columns"]
	case "set-table-comment":
		return get("comment", &u.comment)
	case "add-commit":
		if err := get("commit", &u.commit); err != nil {
			return err
		}
		return get("uniform", &u.uniform)
	case "set-latest-backfilled-version":
		return get("latest-published-version", &u.publishedVer)
	case "set-protocol":
		return get("protocol", &u.protocol)
	case "set-domain-metadata":
		u.domainRaw = m["updates"]
	case "remove-domain-metadata":
		return get("domains", &u.domainsToDel)
	case "set-partition-columns":
		return get("partition-columns", &u.partitions)
	case "update-metadata-snapshot-version":
		if err := get("last-commit-version", &u.lastVersion); err != nil {
			return err
		}
		return get("last-commit-timestamp-ms", &u.lastTsMs)
	}
	return nil
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	c, sc, tn := pathTable(r)
	s.mu.Lock()
	hook := s.beforeUpdate
	s.mu.Unlock()
	if hook != nil {
		hook(c + "." + sc + "." + tn)
	}
	u, aerr := parseUpdate(mustBody(r), func(msg string) {
		s.recordViolation(r, fmt.Sprintf("request %s %s violates the API definition: %s", r.Method, r.URL.Path, msg))
	})
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	resp, aerr := s.update(c, sc, tn, u)
	if aerr != nil {
		writeError(w, r, aerr)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// update runs §4.1 steps 2–11 under the lock, on a copy of the table that
// replaces the stored one only when everything passed.
func (s *Server) update(c, sc, tn string, u *updateRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	orig, aerr := s.lookup(c, sc, tn)
	if aerr != nil {
		return nil, aerr
	}
	if orig.Format != "DELTA" {
		return nil, unsupportedFormat(orig.FullName())
	}
	if !strings.EqualFold(u.uuid, orig.UUID) {
		return nil, conflict("assert-table-uuid failed: expected %s but table has %s", u.uuid, orig.UUID)
	}
	preEtag := orig.Etag
	t := orig.clone()
	if aerr := s.applyMetadata(t, u); aerr != nil {
		return nil, aerr
	}
	staleNewest := false
	if u.has["add-commit"] || u.has["set-latest-backfilled-version"] {
		wasMarked := len(orig.Commits) > 0 && orig.Commits[len(orig.Commits)-1].Backfilled
		replay, aerr := s.applyCommit(t, u)
		if aerr != nil {
			return nil, aerr
		}
		if replay {
			return s.loadResponse(orig), nil
		}
		n := len(t.Commits)
		staleNewest = !u.has["add-commit"] && n > 0 && t.Commits[n-1].Backfilled && !wasMarked
	}
	if u.etag != nil && *u.etag != preEtag {
		return nil, conflict("assert-etag failed: expected %s but table has %s", *u.etag, preEtag)
	}
	if aerr := checkWidths(t); aerr != nil {
		return nil, aerr
	}
	if changesMetadata(u) {
		if u.has["add-commit"] && u.commit != nil && t.Type == "MANAGED" && metadataActions(u) {
			t.Properties["delta.lastUpdateVersion"] = strconv.FormatInt(*u.commit.Version, 10)
			t.Properties["delta.lastCommitTimestamp"] = strconv.FormatInt(*u.commit.Timestamp, 10)
		}
		s.touch(t)
	}
	*orig = *t
	resp := s.loadResponse(orig)
	if staleNewest {
		// The server marks the newest commit backfilled with a bulk update
		// its session does not see, so this answer (not later loads) still
		// lists that commit.
		c := orig.Commits[len(orig.Commits)-1]
		resp["commits"] = []any{commitJSON(c)}
	}
	return resp, nil
}

// metadataActions reports log-represented metadata actions in u.
func metadataActions(u *updateRequest) bool {
	for _, a := range []string{"set-properties", "remove-properties", "set-protocol", "set-columns",
		"set-partition-columns", "set-table-comment", "set-domain-metadata", "remove-domain-metadata"} {
		if u.has[a] {
			return true
		}
	}
	return false
}

// changesMetadata is the §4.4 list of what advances updated_at (and so the
// etag), whether or not any value changes.
func changesMetadata(u *updateRequest) bool {
	for _, a := range []string{"set-properties", "remove-properties", "set-protocol", "set-columns",
		"set-partition-columns", "set-table-comment", "remove-domain-metadata", "update-metadata-snapshot-version"} {
		if u.has[a] {
			return true
		}
	}
	if u.has["set-domain-metadata"] {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(u.domainRaw, &m)
		for k := range m {
			if k != domainRowTracking {
				return true
			}
		}
	}
	return u.has["add-commit"] && u.uniform != nil
}

// applyMetadata is §4.2 steps 1–9.
func (s *Server) applyMetadata(t *Table, u *updateRequest) *apiError {
	if u.has["set-columns"] || u.has["set-partition-columns"] {
		cols := t.Columns
		if u.has["set-columns"] {
			if len(u.columns) == 0 || string(u.columns) == "null" {
				return invalid("set-columns requires a columns block.")
			}
			var probe struct {
				Fields *[]json.RawMessage `json:"fields"`
			}
			if err := json.Unmarshal(u.columns, &probe); err != nil || probe.Fields == nil {
				return invalid("set-columns requires columns.fields.")
			}
			if len(*probe.Fields) == 0 {
				return invalid("set-columns requires at least one column.")
			}
			var aerr *apiError
			if cols, aerr = parseColumns(u.columns); aerr != nil {
				return aerr
			}
			if s.cfg.renameGuards {
				if aerr := checkRenameGuards(t, cols); aerr != nil {
					return aerr
				}
			}
		}
		parts := t.PartitionColumns
		if u.has["set-partition-columns"] {
			if u.partitions == nil {
				return invalid("set-partition-columns requires a partition-columns list.")
			}
			parts = *u.partitions
		}
		resolved, aerr := resolvePartitions(cols, parts)
		if aerr != nil {
			return aerr
		}
		t.Columns, t.PartitionColumns, t.ColumnsCorrupt = cols, resolved, false
	}
	if u.has["set-protocol"] {
		if aerr := checkProtocol(u.protocol, "set-protocol"); aerr != nil {
			return aerr
		}
		applyProtocol(t.Properties, u.protocol)
	}
	for k, v := range u.setProps { // absent or empty updates: a no-op, as on the server
		t.Properties[k] = v
	}
	for _, k := range u.removals {
		delete(t.Properties, k)
	}
	if u.has["set-domain-metadata"] {
		du, aerr := parseDomainUpdates(u.domainRaw, "set-domain-metadata")
		if aerr != nil {
			return aerr
		}
		if s.cfg.refuseClustering && du.Clustering != nil {
			return invalid("Update to Delta domain metadata delta.clustering is not allowed. (error code 5115)")
		}
		s.applyDomains(t.Properties, du)
	}
	if u.has["remove-domain-metadata"] && u.domainsToDel != nil {
		for _, d := range *u.domainsToDel {
			switch d {
			case domainClustering:
				delete(t.Properties, s.cfg.clusteringKey)
			case domainRowTracking:
				delete(t.Properties, "delta.rowTracking.rowIdHighWaterMark")
			default:
				return invalid("Unknown domain in remove-domain-metadata: %s", d)
			}
		}
	}
	if u.has["set-table-comment"] {
		if u.comment == nil {
			return invalid("set-table-comment requires a comment.")
		}
		c := *u.comment
		t.Comment = &c
	}
	if u.has["update-metadata-snapshot-version"] {
		if t.Type != "EXTERNAL" {
			return invalid("update-metadata-snapshot-version is only supported for EXTERNAL Delta tables; for MANAGED tables, use the Delta commit endpoint.")
		}
		if u.lastVersion == nil {
			return invalid("update-metadata-snapshot-version requires last-commit-version.")
		}
		if u.lastTsMs == nil {
			return invalid("update-metadata-snapshot-version requires last-commit-timestamp-ms.")
		}
		t.Properties["delta.lastUpdateVersion"] = strconv.FormatInt(*u.lastVersion, 10)
		t.Properties["delta.lastCommitTimestamp"] = strconv.FormatInt(*u.lastTsMs, 10)
	}
	if t.Type == "MANAGED" {
		_, hasClustering := t.Properties[s.cfg.clusteringKey]
		_, hasRowTracking := t.Properties["delta.rowTracking.rowIdHighWaterMark"]
		switch {
		case u.has["set-protocol"]:
			if aerr := checkContract(u.protocol, t.Properties, hasClustering, hasRowTracking); aerr != nil {
				return aerr
			}
		case u.has["set-domain-metadata"]:
			if aerr := checkDomainFeatures(featuresFromProps(t.Properties), hasClustering, hasRowTracking); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}
