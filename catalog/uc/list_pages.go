package uc

import (
	"context"
	"encoding/json"
	"net/url"
)

// ListTablesPages calls listTables for catalog.schema and hands each page to
// fn as it arrives, so a caller can start working on the first tables while
// the rest is still being listed. fn's error stops the listing and is
// returned. The tables' columns are not decoded (Columns is empty): a
// listing is read for names, types, locations, comments and updated_at,
// and the columns of a page are most of its bytes. The slice is fn's to keep.
func (c *Client) ListTablesPages(ctx context.Context, catalog, schema string, fn func(page []TableInfo) error) error {
	q := url.Values{"catalog_name": {catalog}, "schema_name": {schema}}
	return listPages(ctx, c, "listTables", "/tables", q, true,
		func(p *listPage[listedTable]) []listedTable { return p.Tables },
		func(page []listedTable) error {
			out := make([]TableInfo, len(page))
			for i := range page {
				out[i] = TableInfo(page[i].withoutColumns)
			}
			return fn(out)
		})
}

// listedTable decodes a TableInfo but skips its columns.
type listedTable struct{ withoutColumns }

type withoutColumns TableInfo

// UnmarshalJSON decodes every TableInfo field except columns.
func (t *listedTable) UnmarshalJSON(b []byte) error {
	var v struct {
		withoutColumns
		Columns skipped `json:"columns,omitempty"` // shadows TableInfo.Columns
	}
	err := json.Unmarshal(b, &v)
	t.withoutColumns = v.withoutColumns
	return err
}

// skipped is a JSON value that is validated but not kept.
type skipped struct{}

// UnmarshalJSON keeps nothing.
func (skipped) UnmarshalJSON([]byte) error { return nil }

// stopListing carries the callback's error through listAll unwrapped.
type stopListing struct{ err error }

func (s *stopListing) Error() string { return s.err.Error() }
func (s *stopListing) Unwrap() error { return s.err }
