package uc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
)

// Databricks' credential-vending denials get a message that says which
// grant or setting is missing.
func TestCredentialDenialsSayWhatIsMissing(t *testing.T) {
	cases := []struct {
		body, want string
	}{
		{`{"error_code":"EXTERNAL_GENERATE_TABLE_CREDENTIALS_DENIED","message":"Credential vending for external engines is denied"}`, "External data access"},
		{`{"error_code":"PERMISSION_DENIED","message":"External data access is not enabled on metastore m"}`, "metastore admin must turn on External data access"},
		{`{"error_code":"PERMISSION_DENIED","message":"User does not have EXTERNAL USE SCHEMA on Schema 'main.sales'"}`, "GRANT EXTERNAL USE SCHEMA ON SCHEMA main.sales TO <principal>"},
		{`{"error_code":"PERMISSION_DENIED","message":"User does not have SELECT on Table 'main.sales.t'"}`, ""},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			fmt.Fprint(w, c.body)
		}))
		cl, err := uc.New(srv.URL+"/api/2.1/unity-catalog", uc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.ReadCredentials(context.Background(), catalog.TableName{Catalog: "main", Schema: "sales", Table: "t"}, "s3://b/t")
		srv.Close()
		var de *uc.CredentialDenialError
		switch {
		case !uc.IsForbidden(err):
			t.Errorf("%s: %v is not a 403", c.body, err)
		case c.want == "" && errors.As(err, &de):
			t.Errorf("%s: hint %q for a plain denial", c.body, de.Hint)
		case c.want != "" && (!errors.As(err, &de) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a hint containing %q", c.body, err, c.want)
		}
	}
}
