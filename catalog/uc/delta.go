package uc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// SupportedProtocolVersions returns what Config offers: the highest minor
// version per major version of the Delta API this client speaks.
func SupportedProtocolVersions() []string { return []string{"1.0"} }

func deltaTablePath(n catalog.TableName) string {
	return "/delta/v1/catalogs/" + seg(n.Catalog) + "/schemas/" + seg(n.Schema) + "/tables/" + seg(n.Table)
}

// Config calls GET /delta/v1/config (getConfig). A 404 that does not name a
// missing catalog means the server has no Delta API: the error then matches
// ErrNoDeltaAPI (and still unwraps to the *APIError). An answered
// protocol-version we did not offer gives an error matching ErrProtocolVersion.
func (c *Client) Config(ctx context.Context, catalog string) (*DeltaConfig, error) {
	var out DeltaConfig
	offered := SupportedProtocolVersions()
	q := url.Values{"catalog": {catalog}, "protocol-versions": {strings.Join(offered, ",")}}
	_, err := c.do(ctx, request{op: "getConfig", method: http.MethodGet, path: "/delta/v1/config", query: q}, &out)
	if err != nil {
		if e, ok := asAPIError(err); ok && e.Status == http.StatusNotFound && !namesMissingCatalog(e.Type) {
			return nil, fmt.Errorf("%w: %w", ErrNoDeltaAPI, err)
		}
		return nil, err
	}
	if !protocolVersionOffered(out.ProtocolVersion, offered) {
		return nil, fmt.Errorf("%w: server chose %q, we offered %s", ErrProtocolVersion,
			out.ProtocolVersion, strings.Join(offered, ","))
	}
	return &out, nil
}

// namesMissingCatalog reports whether a 404's error type says the catalog
// (not the endpoint) is missing: NoSuchCatalogException in the Delta
// envelope, CATALOG_NOT_FOUND / CATALOG_DOES_NOT_EXIST in the classic one.
func namesMissingCatalog(typ string) bool {
	return strings.HasPrefix(typ, "NoSuch") || strings.HasPrefix(strings.ToUpper(typ), "CATALOG_")
}

// protocolVersionOffered reports whether v ("major.minor") is within what we
// offered (for each offered "M.m": any M.x with x ≤ m).
func protocolVersionOffered(v string, offered []string) bool {
	maj, minor, ok := splitVersion(v)
	if !ok {
		return false
	}
	for _, o := range offered {
		om, on, ok := splitVersion(o)
		if ok && om == maj && minor <= on {
			return true
		}
	}
	return false
}

func splitVersion(v string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return maj, minor, err1 == nil && err2 == nil && maj >= 0 && minor >= 0
}

// LoadTable calls loadTable. A 400 IsUnsupportedFormat error means the table
// is not Delta (use GetTable).
func (c *Client) LoadTable(ctx context.Context, name catalog.TableName) (*LoadTableResponse, error) {
	var out LoadTableResponse
	if _, err := c.do(ctx, request{op: "loadTable", method: http.MethodGet, path: deltaTablePath(name)}, &out); err != nil {
		return nil, err
	}
	return checkLoadResponse("loadTable", name.String(), &out)
}

// CreateTable calls createTable in catalog.schema (req.Name is the table).
// deltasync uses it to register EXTERNAL tables. Note the server stamps
// delta.lastUpdateVersion=0 whatever the log version; follow with an
// UpdateMetadataSnapshotVersion. If a retried create had in fact succeeded,
// the resend fails with IsAlreadyExists: load the table and compare its
// location to decide.
func (c *Client) CreateTable(ctx context.Context, catalog, schema string, req CreateTableRequest) (*LoadTableResponse, error) {
	if err := c.limits().CheckCreate(req); err != nil {
		return nil, fmt.Errorf("catalog: createTable %s.%s.%s: %w", catalog, schema, req.Name, err)
	}
	var out LoadTableResponse
	path := "/delta/v1/catalogs/" + seg(catalog) + "/schemas/" + seg(schema) + "/tables"
	if _, err := c.do(ctx, request{op: "createTable", method: http.MethodPost, path: path, body: req}, &out); err != nil {
		return nil, err
	}
	return checkLoadResponse("createTable", catalog+"."+schema+"."+req.Name, &out)
}

// UpdateTable calls updateTable. It checks the shape rules the server
// enforces (see Validate) and the widths it stores values in (see Limits)
// before sending; a request the server would refuse is not sent and the
// error satisfies errors.Is(err, catalog.ErrRefused), as does the server's own
// refusal. A 409 comes back as an error for which IsConflict or
// IsCommitConflict holds: reload and re-plan. (If a retried update had in
// fact been applied, its resend fails assert-etag: the reload then shows no
// remaining diff.)
func (c *Client) UpdateTable(ctx context.Context, name catalog.TableName, req UpdateTableRequest) (*LoadTableResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("catalog: updateTable %s: %w", name, err)
	}
	if err := c.limits().CheckUpdate(req); err != nil {
		return nil, fmt.Errorf("catalog: updateTable %s: %w", name, err)
	}
	var out LoadTableResponse
	if _, err := c.do(ctx, request{op: "updateTable", method: http.MethodPost, path: deltaTablePath(name), body: req}, &out); err != nil {
		return nil, err
	}
	return checkLoadResponse("updateTable", name.String(), &out)
}

// Validate checks the shape rules the server enforces: at least one update,
// an AssertTableUUID, at most one requirement or action of each type, and no
// key (domain) both set and removed.
func (r UpdateTableRequest) Validate() error {
	if len(r.Updates) == 0 {
		return errors.New("at least one update is required")
	}
	seen := map[string]bool{}
	hasUUID := false
	for _, q := range r.Requirements {
		if q == nil {
			return errors.New("nil requirement")
		}
		t := q.RequirementType()
		if seen[t] {
			return fmt.Errorf("at most one %s is allowed per request", t)
		}
		seen[t] = true
		hasUUID = hasUUID || t == "assert-table-uuid"
	}
	if !hasUUID {
		return errors.New("assert-table-uuid requirement is required")
	}
	setKeys, setDomains := map[string]bool{}, map[string]bool{}
	var removals, removedDomains []string
	for _, u := range r.Updates {
		if u == nil {
			return errors.New("nil update")
		}
		a := u.Action()
		if seen[a] {
			return fmt.Errorf("at most one %s is allowed per request", a)
		}
		seen[a] = true
		switch v := derefUpdate(u).(type) {
		case SetProperties:
			for k := range v.Updates {
				setKeys[k] = true
			}
		case RemoveProperties:
			removals = v.Removals
		case SetDomainMetadata:
			setDomains[catalog.DomainClustering] = v.Clustering != nil
			setDomains[catalog.DomainRowTracking] = v.RowIDHighWaterMark != nil
		case RemoveDomainMetadata:
			removedDomains = v.Domains
		}
	}
	for _, k := range removals {
		if setKeys[k] {
			return fmt.Errorf("set-properties and remove-properties overlap on key %q", k)
		}
	}
	for _, d := range removedDomains {
		if setDomains[d] {
			return fmt.Errorf("set-domain-metadata and remove-domain-metadata overlap on domain %q", d)
		}
	}
	return nil
}

// TableExists calls tableExists (HEAD): true on 2xx, false on 404.
func (c *Client) TableExists(ctx context.Context, name catalog.TableName) (bool, error) {
	_, err := c.do(ctx, request{op: "tableExists", method: http.MethodHead, path: deltaTablePath(name)}, nil)
	switch {
	case err == nil:
		return true, nil
	case IsNotFound(err):
		return false, nil
	}
	return false, err
}

// TableCredentials calls getTableCredentials for operation READ or READ_WRITE.
// READ needs SELECT on the table (or OWNER).
func (c *Client) TableCredentials(ctx context.Context, name catalog.TableName, operation string) (*CredentialsResponse, error) {
	var out CredentialsResponse
	q := url.Values{"operation": {operation}}
	r := request{op: "getTableCredentials", method: http.MethodGet, path: deltaTablePath(name) + "/credentials", query: q}
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// checkLoadResponse rejects a 2xx answer that lacks the fields deltasync
// relies on (an empty body decodes to a zero response otherwise).
func checkLoadResponse(op, table string, r *LoadTableResponse) (*LoadTableResponse, error) {
	m := &r.Metadata
	for _, f := range []struct{ name, v string }{
		{"etag", m.Etag}, {"table-uuid", m.TableUUID}, {"table-type", m.TableType}, {"location", m.Location},
	} {
		if f.v == "" {
			return nil, fmt.Errorf("catalog: %s %s: response lacks metadata.%s", op, table, f.name)
		}
	}
	return r, nil
}

// StagingTable is createStagingTable's answer: where a new MANAGED table
// will live, and the protocol and properties the catalog requires of it.
type StagingTable struct {
	TableID   string `json:"table-id"`
	TableType string `json:"table-type"`
	Location  string `json:"location"`
	// RequiredProtocol and RequiredProperties must be in the table's first
	// commit. A nil property value means "the engine generates it".
	RequiredProtocol   catalog.Protocol   `json:"required-protocol"`
	RequiredProperties map[string]*string `json:"required-properties"`
}

// CreateStagingTable calls createStagingTable in catalog.schema: the first
// step of creating a catalog-managed table (write version 0 at Location,
// then CreateTable with TableTypeManaged). deltasync itself never creates
// tables; the demo and the end-to-end tests do, as an engine would.
func (c *Client) CreateStagingTable(ctx context.Context, catalog, schema, name string) (*StagingTable, error) {
	var out StagingTable
	path := "/delta/v1/catalogs/" + seg(catalog) + "/schemas/" + seg(schema) + "/staging-tables"
	body := struct {
		Name string `json:"name"`
	}{name}
	if _, err := c.do(ctx, request{op: "createStagingTable", method: http.MethodPost, path: path, body: body}, &out); err != nil {
		return nil, err
	}
	if out.TableID == "" || out.Location == "" {
		return nil, fmt.Errorf("catalog: createStagingTable %s.%s.%s: answer lacks table-id or location", catalog, schema, name)
	}
	return &out, nil
}
