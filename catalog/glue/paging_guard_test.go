package glue

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// A server that never stops paging (the same NextToken again and again)
// ends the listing with an error naming the loop, long before the
// caller's deadline, and no page is taken for the whole listing.
func TestListingRefusesAServerThatPagesInALoop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "AWSGlue.GetTables":
			_, _ = w.Write([]byte(`{"TableList":[],"NextToken":"again"}`))
		case "AWSGlue.GetDatabases":
			_, _ = w.Write([]byte(`{"DatabaseList":[{"Name":"d"}],"NextToken":"again"}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c, err := New(context.Background(), Config{Region: "us-east-1", Endpoint: srv.URL,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pages := 0
	err = c.TablesPages(ctx, "d", func([]types.Table) error { pages++; return nil })
	if err == nil || !strings.Contains(err.Error(), "NextToken") || ctx.Err() != nil {
		t.Errorf("TablesPages of a looping server = %v (ctx %v), want an error naming the NextToken loop", err, ctx.Err())
	}
	if pages > 1 {
		t.Errorf("%d pages handed over before the loop was refused", pages)
	}
	if _, err := c.Databases(ctx); err == nil || !strings.Contains(err.Error(), "NextToken") {
		t.Errorf("Databases of a looping server = %v, want an error naming the NextToken loop", err)
	}
}
