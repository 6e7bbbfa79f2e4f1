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
		_, page, err := c.send(ctx, request{op: op, method: http.MethodGet, path: path, query: pq})
		if err != nil {
			return err
		}
		next, err := decode(page)
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

// listPage is one page of a classic list answer. Each list call reads the
// items field of its resource (see listPages); the others stay empty.
type listPage[T any] struct {
	Catalogs      []T     `json:"catalogs"`
	Schemas       []T     `json:"schemas"`
	Tables        []T     `json:"tables"`
	NextPageToken *string `json:"next_page_token"`
}

// listPages pages through a classic list endpoint (listAll), decoding each
// page as a listPage[T] (after prepare, when set, rewrites its bytes) and
// handing fn the items picked by items. fn's error stops the listing and
// is returned as is.
func listPages[T any](ctx context.Context, c *Client, op, path string, q url.Values, prepare func([]byte) []byte,
	items func(*listPage[T]) []T, fn func([]T) error) error {
	return c.listAll(ctx, op, path, q, func(b []byte) (string, error) {
		if prepare != nil {
			b = prepare(b)
		}
		var page listPage[T]
		if err := json.Unmarshal(b, &page); err != nil {
			return "", err
		}
		if err := fn(items(&page)); err != nil {
			return "", &stopListing{err}
		}
		return deref(page.NextPageToken), nil
	})
}

// listEvery collects every page of a classic list endpoint.
func listEvery[T any](ctx context.Context, c *Client, op, path string, q url.Values, items func(*listPage[T]) []T) ([]T, error) {
	var all []T
	err := listPages(ctx, c, op, path, q, nil, items, func(page []T) error {
		all = append(all, page...)
		return nil
	})
	return all, err
}

// ListCatalogs calls listCatalogs and returns every page.
func (c *Client) ListCatalogs(ctx context.Context) ([]CatalogInfo, error) {
	return listEvery(ctx, c, "listCatalogs", "/catalogs", url.Values{},
		func(p *listPage[CatalogInfo]) []CatalogInfo { return p.Catalogs })
}

// ListSchemas calls listSchemas for catalog and returns every page.
func (c *Client) ListSchemas(ctx context.Context, catalog string) ([]SchemaInfo, error) {
	return listEvery(ctx, c, "listSchemas", "/schemas", url.Values{"catalog_name": {catalog}},
		func(p *listPage[SchemaInfo]) []SchemaInfo { return p.Schemas })
}

// ListTables calls listTables for catalog.schema and returns every page.
func (c *Client) ListTables(ctx context.Context, catalog, schema string) ([]TableInfo, error) {
	return listEvery(ctx, c, "listTables", "/tables", url.Values{"catalog_name": {catalog}, "schema_name": {schema}},
		func(p *listPage[TableInfo]) []TableInfo { return p.Tables })
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
