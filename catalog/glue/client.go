package glue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go/middleware"
)

// PageSize is the MaxResults of GetTables and GetDatabases: Glue's
// maximum (CatalogGetterPageSize, 1..100), so a database of N tables costs
// ceil(N/100) calls.
const PageSize = 100

func (c *Client) catalogID() *string {
	if c.cfg.CatalogID == "" {
		return nil
	}
	return aws.String(c.cfg.CatalogID)
}

// Databases lists the names of the catalog's databases (GetDatabases, in
// pages of PageSize).
func (c *Client) Databases(ctx context.Context) ([]string, error) {
	p := sdkglue.NewGetDatabasesPaginator(c.api, &sdkglue.GetDatabasesInput{
		CatalogId: c.catalogID(), MaxResults: aws.Int32(PageSize),
	})
	var names []string
	var g pageGuard
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, wrap("GetDatabases", "", err)
		}
		if err := g.next(out.NextToken); err != nil {
			return nil, wrap("GetDatabases", "", err)
		}
		for _, d := range out.DatabaseList {
			names = append(names, aws.ToString(d.Name))
		}
	}
	return names, nil
}

// TablesPages calls fn with each page of db's tables (GetTables, MaxResults
// PageSize): the whole records, so a listing needs no GetTable per table.
// An error from fn stops the listing and is returned as is.
func (c *Client) TablesPages(ctx context.Context, db string, fn func([]types.Table) error) error {
	p := sdkglue.NewGetTablesPaginator(c.api, &sdkglue.GetTablesInput{
		CatalogId: c.catalogID(), DatabaseName: aws.String(db), MaxResults: aws.Int32(PageSize),
	})
	var g pageGuard
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return wrap("GetTables", db, err)
		}
		if err := g.next(out.NextToken); err != nil {
			return wrap("GetTables", db, err)
		}
		if err := fn(out.TableList); err != nil {
			return err
		}
	}
	return nil
}

// GetTable reads one table's record.
func (c *Client) GetTable(ctx context.Context, db, name string) (*types.Table, error) {
	out, err := c.api.GetTable(ctx, &sdkglue.GetTableInput{
		CatalogId: c.catalogID(), DatabaseName: aws.String(db), Name: aws.String(name),
	})
	if err != nil {
		return nil, wrap("GetTable", db+"."+name, err)
	}
	return out.Table, nil
}

// Update replaces db's table in.Name with in (UpdateTable replaces the
// whole record: build in with Apply, which copies every field). versionID
// is the VersionId of the record in was built from: Glue refuses the write
// with ConcurrentModificationException (ErrConflict) if the table moved
// since. An empty versionID sends no guard (a caller must say so on
// purpose). SkipArchive is sent as Config says.
//
// The SDK's retryer sends the update again after an attempt whose answer
// was lost (a 5xx, a cut connection): if that attempt was applied, the
// resend's VersionId is stale and Glue answers ConcurrentModification-
// Exception. Such a conflict is not another writer's: the error then
// wraps ErrOutcomeUnknown (catalog.ErrOutcomeUnknown), not ErrConflict,
// and the caller reads the record to learn whether it holds the write.
func (c *Client) Update(ctx context.Context, db string, in *types.TableInput, versionID string) error {
	req := &sdkglue.UpdateTableInput{
		CatalogId: c.catalogID(), DatabaseName: aws.String(db), TableInput: in,
		SkipArchive: aws.Bool(c.cfg.SkipArchive()),
	}
	if versionID != "" {
		req.VersionId = aws.String(versionID)
	}
	var lost atomic.Bool
	_, err := c.api.UpdateTable(ctx, req, func(o *sdkglue.Options) {
		o.APIOptions = append(o.APIOptions, noteLost(&lost))
	})
	table := db + "." + aws.ToString(in.Name)
	if err != nil && lost.Load() && errors.Is(classify(err), ErrConflict) {
		return &Error{Op: "UpdateTable", Table: table, Err: &kindError{ErrOutcomeUnknown, err,
			"an attempt's answer was lost and the resend found the record moved (ConcurrentModificationException): it may be this write's"}}
	}
	return wrap("UpdateTable", table, err)
}

// noteLost sets lost when an attempt of the call gets no answer the
// server gave to the request as sent: a 5xx or no answer at all (the
// retryer, in the Finalize step, sends it again; this runs per attempt).
func noteLost(lost *atomic.Bool) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("deltasync.glue.lost",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				var re *awshttp.ResponseError
				if err != nil && (!errors.As(err, &re) || re.HTTPStatusCode() >= 500) {
					lost.Store(true)
				}
				return out, md, err
			}), middleware.Before)
	}
}

// CreateTable registers in in db (ErrAlreadyExists if the name is taken).
func (c *Client) CreateTable(ctx context.Context, db string, in *types.TableInput) error {
	_, err := c.api.CreateTable(ctx, &sdkglue.CreateTableInput{
		CatalogId: c.catalogID(), DatabaseName: aws.String(db), TableInput: in,
	})
	return wrap("CreateTable", db+"."+aws.ToString(in.Name), err)
}

// CreateDatabase creates an empty database (ErrAlreadyExists if it exists).
func (c *Client) CreateDatabase(ctx context.Context, name string) error {
	_, err := c.api.CreateDatabase(ctx, &sdkglue.CreateDatabaseInput{
		CatalogId: c.catalogID(), DatabaseInput: &types.DatabaseInput{Name: aws.String(name)},
	})
	return wrap("CreateDatabase", name, err)
}

// DeleteTable removes a table's record (never its data: Glue holds none).
func (c *Client) DeleteTable(ctx context.Context, db, name string) error {
	_, err := c.api.DeleteTable(ctx, &sdkglue.DeleteTableInput{
		CatalogId: c.catalogID(), DatabaseName: aws.String(db), Name: aws.String(name),
	})
	return wrap("DeleteTable", db+"."+name, err)
}

// maxListPages bounds one listing: 100,000 pages of at most PageSize
// entries, far above any catalog, so a server that never stops paging
// ends the listing with an error instead of running until the deadline.
const maxListPages = 100_000

// pageGuard refuses a listing whose server never stops paging: a
// NextToken it answered before (the SDK's paginator would ask for the
// same page again, forever) or more than maxListPages pages. Such a
// listing is an error, never a partial listing taken for a whole one.
type pageGuard struct {
	pages int
	seen  map[string]bool
}

func (g *pageGuard) next(token *string) error {
	g.pages++
	if g.pages > maxListPages {
		return fmt.Errorf("the listing goes on past %d pages: refused", maxListPages)
	}
	if token == nil || *token == "" {
		return nil
	}
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	if g.seen[*token] {
		return fmt.Errorf("page %d answered a NextToken the listing was given before: the server pages in a loop, listing refused", g.pages)
	}
	g.seen[*token] = true
	return nil
}
