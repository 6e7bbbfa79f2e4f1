package uc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"strconv"
)

// pageSize is the max_results sent when listing (all.yaml caps tables at 50).
const pageSize = 50

// listAll pages through a classic list endpoint: it loops until a page
// carries no next_page_token (a full page always carries one, so the last
// page may be empty). readPage reads each page (see pageScan), decode
// decodes it and returns its token and how
// many entries it held. A listing is bounded (listBounds): in pages, in
// entries, in bytes and entries per page (pageGuard, as the body arrives),
// and a repeated or oversized token ends it; each is an ErrListBound
// error naming the listing.
func (c *Client) listAll(ctx context.Context, op, path string, q url.Values, dropColumns bool, decode func(page []byte) (string, int, error)) error {
	bounds := c.listBounds()
	name := q.Get("catalog_name")
	if s := q.Get("schema_name"); s != "" {
		name += "." + s
	}
	if name != "" {
		name = " " + name
	}
	seed := maphash.MakeSeed()
	seen := map[uint64]bool{}
	token, entries := "", 0
	for page := 1; ; page++ {
		if page > bounds.pages {
			return fmt.Errorf("catalog: %s%s: %w", op, name, &boundError{fmt.Sprintf(
				"more than %d pages (a listing holds at most %d entries, MaxListEntries, %d a page): the server's page tokens do not end",
				bounds.pages, bounds.entries, pageSize)})
		}
		pq := url.Values{}
		for k, v := range q {
			pq[k] = v
		}
		pq.Set("max_results", strconv.Itoa(pageSize))
		if token != "" {
			pq.Set("page_token", token)
		}
		_, body, err := c.send(ctx, request{op: op, method: http.MethodGet, path: path, query: pq,
			page: &pageLimit{entries: pageSize, bytes: bounds.pageBytes, dropColumns: dropColumns}})
		var be *boundError
		if errors.As(err, &be) {
			return fmt.Errorf("catalog: %s%s: page %d: %w", op, name, page, err)
		}
		if err != nil {
			return err
		}
		next, n, err := decode(body)
		if stop, ok := err.(*stopListing); ok {
			return stop.err
		}
		if ae, ok := err.(*APIError); ok { // an error envelope in a 200 answer
			ae.Message += fmt.Sprintf(" (an error envelope in a 200 answer, page %d of the listing%s)", page, name)
			return ae
		}
		if errors.As(err, &be) {
			return fmt.Errorf("catalog: %s%s: page %d: %w", op, name, page, err)
		}
		if err != nil {
			return fmt.Errorf("catalog: %s%s: page %d: decode response: %w", op, name, page, err)
		}
		if entries += n; entries > bounds.entries {
			return fmt.Errorf("catalog: %s%s: %w", op, name, &boundError{fmt.Sprintf(
				"more than %d entries (MaxListEntries) in %d pages", bounds.entries, page)})
		}
		if next == "" {
			return nil
		}
		if len(next) > maxPageToken {
			return fmt.Errorf("catalog: %s%s: page %d: %w", op, name, page, &boundError{fmt.Sprintf(
				"page token of %d bytes, over %d: %s", len(next), maxPageToken, quoteToken(next))})
		}
		h := maphash.String(seed, next)
		if seen[h] {
			return fmt.Errorf("catalog: %s%s: page %d: %w", op, name, page, &boundError{
				"server repeated page token " + quoteToken(next)})
		}
		seen[h] = true
		token = next
	}
}

// listPage is one page of a classic list answer. Each list call reads the
// items field of its resource (see listPages); the others stay empty.
// Error and ErrorCode catch an error envelope sent with status 200.
type listPage[T any] struct {
	Catalogs      []T             `json:"catalogs"`
	Schemas       []T             `json:"schemas"`
	Tables        []T             `json:"tables"`
	NextPageToken *string         `json:"next_page_token"`
	Error         json.RawMessage `json:"error"`
	ErrorCode     *string         `json:"error_code"`
}

// listPages pages through a classic list endpoint (listAll), decoding each
// page as a listPage[T] (with its entries' columns dropped unread when
// dropColumns; see pageScan) and
// handing fn the items picked by items. fn's error stops the listing and
// is returned as is.
func listPages[T any](ctx context.Context, c *Client, op, path string, q url.Values, dropColumns bool,
	items func(*listPage[T]) []T, fn func([]T) error) error {
	return c.listAll(ctx, op, path, q, dropColumns, func(b []byte) (string, int, error) {
		page, err := decodePage(op, b, items)
		if err != nil {
			return "", 0, err
		}
		if err := fn(items(page)); err != nil {
			return "", 0, &stopListing{err}
		}
		return deref(page.NextPageToken), len(items(page)), nil
	})
}

// decodePage decodes one list page body: it must be a JSON object, not an
// error envelope, and hold at most pageSize items.
func decodePage[T any](op string, b []byte, items func(*listPage[T]) []T) (*listPage[T], error) {
	if err := notAnObject(b); err != nil {
		return nil, err
	}
	var page listPage[T]
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, err
	}
	if err := envelopeIn200(op, b, page.ErrorCode, page.Error); err != nil {
		return nil, err
	}
	if len(items(&page)) > pageSize {
		return nil, &boundError{fmt.Sprintf("page holds %d entries, more than the %d max_results asked for", len(items(&page)), pageSize)}
	}
	return &page, nil
}

// listEvery collects every page of a classic list endpoint.
func listEvery[T any](ctx context.Context, c *Client, op, path string, q url.Values, items func(*listPage[T]) []T) ([]T, error) {
	var all []T
	err := listPages(ctx, c, op, path, q, false, items, func(page []T) error {
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
