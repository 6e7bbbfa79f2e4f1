package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// pageSize is the max_results sent when listing (all.yaml caps tables at 50).
const pageSize = 50

// listAll pages through a classic list endpoint: it loops until a page
// carries no next_page_token (a full page always carries one, so the last
// page may be empty). decode appends one page's items and returns its token.
func (c *Client) listAll(ctx context.Context, op, path string, q url.Values, decode func(page []byte) (string, error)) error {
	seen := map[string]bool{}
	token := ""
	for {
		pq := url.Values{}
		for k, v := range q {
			pq[k] = v
		}
		pq.Set("max_results", strconv.Itoa(pageSize))
		if token != "" {
			pq.Set("page_token", token)
		}
		var raw rawJSON
		if _, err := c.do(ctx, request{op: op, method: http.MethodGet, path: path, query: pq}, &raw); err != nil {
			return err
		}
		next, err := decode(raw)
		if stop, ok := err.(*stopListing); ok {
			return stop.err
		}
		if err != nil {
			return fmt.Errorf("catalog: %s: decode response: %w", op, err)
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("catalog: %s: server repeated page token %q", op, next)
		}
		seen[next] = true
		token = next
	}
}

// rawJSON captures a response body for listAll.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// ListCatalogs calls listCatalogs and returns every page.
func (c *Client) ListCatalogs(ctx context.Context) ([]CatalogInfo, error) {
	var all []CatalogInfo
	err := c.listAll(ctx, "listCatalogs", "/catalogs", url.Values{}, func(b []byte) (string, error) {
		var page struct {
			Catalogs      []CatalogInfo `json:"catalogs"`
			NextPageToken *string       `json:"next_page_token"`
		}
		err := json.Unmarshal(b, &page)
		all = append(all, page.Catalogs...)
		return deref(page.NextPageToken), err
	})
	return all, err
}

// ListSchemas calls listSchemas for catalog and returns every page.
func (c *Client) ListSchemas(ctx context.Context, catalog string) ([]SchemaInfo, error) {
	var all []SchemaInfo
	err := c.listAll(ctx, "listSchemas", "/schemas", url.Values{"catalog_name": {catalog}}, func(b []byte) (string, error) {
		var page struct {
			Schemas       []SchemaInfo `json:"schemas"`
			NextPageToken *string      `json:"next_page_token"`
		}
		err := json.Unmarshal(b, &page)
		all = append(all, page.Schemas...)
		return deref(page.NextPageToken), err
	})
	return all, err
}

// ListTables calls listTables for catalog.schema and returns every page.
func (c *Client) ListTables(ctx context.Context, catalog, schema string) ([]TableInfo, error) {
	var all []TableInfo
	q := url.Values{"catalog_name": {catalog}, "schema_name": {schema}}
	err := c.listAll(ctx, "listTables", "/tables", q, func(b []byte) (string, error) {
		var page struct {
			Tables        []TableInfo `json:"tables"`
			NextPageToken *string     `json:"next_page_token"`
		}
		err := json.Unmarshal(b, &page)
		all = append(all, page.Tables...)
		return deref(page.NextPageToken), err
	})
	return all, err
}

// GetTable calls getTable (classic) for "catalog.schema.table". It is the
// only place the table comment is visible.
func (c *Client) GetTable(ctx context.Context, fullName string) (*TableInfo, error) {
	var out TableInfo
	if _, err := c.do(ctx, request{op: "getTable", method: http.MethodGet, path: "/tables/" + seg(fullName)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteTable calls deleteTable (classic) for "catalog.schema.table".
func (c *Client) DeleteTable(ctx context.Context, fullName string) error {
	_, err := c.do(ctx, request{op: "deleteTable", method: http.MethodDelete, path: "/tables/" + seg(fullName)}, nil)
	return err
}

// DeleteCatalog calls deleteCatalog; force also deletes what it contains.
func (c *Client) DeleteCatalog(ctx context.Context, name string, force bool) error {
	q := url.Values{}
	if force {
		q.Set("force", "true")
	}
	_, err := c.do(ctx, request{op: "deleteCatalog", method: http.MethodDelete, path: "/catalogs/" + seg(name), query: q}, nil)
	return err
}

// CreateCatalog calls createCatalog.
func (c *Client) CreateCatalog(ctx context.Context, req CreateCatalogRequest) (*CatalogInfo, error) {
	var out CatalogInfo
	if _, err := c.do(ctx, request{op: "createCatalog", method: http.MethodPost, path: "/catalogs", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateSchema calls createSchema.
func (c *Client) CreateSchema(ctx context.Context, req CreateSchemaRequest) (*SchemaInfo, error) {
	var out SchemaInfo
	if _, err := c.do(ctx, request{op: "createSchema", method: http.MethodPost, path: "/schemas", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
