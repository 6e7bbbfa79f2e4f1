package uc

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

// Credentials is catalog.Credentials: vended storage credentials.
type Credentials = catalog.Credentials

// Credentials returns the credential's config as a Credentials value.
func (c StorageCredential) Credentials() Credentials {
	out := Credentials{
		S3AccessKeyID:     c.Config[ConfigS3AccessKeyID],
		S3SecretAccessKey: c.Config[ConfigS3SecretAccessKey],
		S3SessionToken:    c.Config[ConfigS3SessionToken],
		AzureSASToken:     c.Config[ConfigAzureSASToken],
		GCSOAuthToken:     c.Config[ConfigGCSOAuthToken],
	}
	if c.ExpirationTimeMs > 0 {
		out.Expiration = time.UnixMilli(c.ExpirationTimeMs)
	}
	return out
}

// ForLocation picks the credential whose prefix is the longest one covering
// location (on a path boundary; trailing slashes ignored).
func (r *CredentialsResponse) ForLocation(location string) (StorageCredential, bool) {
	loc := strings.TrimRight(location, "/")
	best, bestLen := StorageCredential{}, -1
	for _, c := range r.StorageCredentials {
		p := strings.TrimRight(c.Prefix, "/")
		if p == "" || loc != p && !strings.HasPrefix(loc, p+"/") {
			continue
		}
		if len(p) > bestLen {
			best, bestLen = c, len(p)
		}
	}
	return best, bestLen >= 0
}

// ReadCredentials fetches READ credentials for the table and returns the
// ones covering location (normally the table's storage location). It needs
// SELECT on the table.
func (c *Client) ReadCredentials(ctx context.Context, name catalog.TableName, location string) (Credentials, error) {
	resp, err := c.TableCredentials(ctx, name, OperationRead)
	if err != nil {
		return Credentials{}, explainDenial(err, name.String())
	}
	sc, ok := resp.ForLocation(location)
	if !ok {
		return Credentials{}, fmt.Errorf("catalog: getTableCredentials %s: no credential covers %s", name, location)
	}
	return sc.Credentials(), nil
}

// temporaryCredentials is the classic API's TemporaryCredentials.
type temporaryCredentials struct {
	AWS *struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
		SessionToken    string `json:"session_token"`
	} `json:"aws_temp_credentials"`
	Azure *struct {
		SASToken string `json:"sas_token"`
	} `json:"azure_user_delegation_sas"`
	GCP *struct {
		OAuthToken string `json:"oauth_token"`
	} `json:"gcp_oauth_token"`
	ExpirationTime int64 `json:"expiration_time"`
}

// TemporaryTableCredentials calls the classic generateTemporaryTableCredentials
// (POST /temporary-table-credentials) for a table id and operation ("READ"):
// the fallback when the server has no Delta API.
func (c *Client) TemporaryTableCredentials(ctx context.Context, tableID, operation string) (Credentials, error) {
	var tc temporaryCredentials
	body := map[string]string{"table_id": tableID, "operation": operation}
	r := request{op: "generateTemporaryTableCredentials", method: http.MethodPost, path: "/temporary-table-credentials", body: body}
	if _, err := c.do(ctx, r, &tc); err != nil {
		return Credentials{}, explainDenial(err, tableID)
	}
	var out Credentials
	if tc.AWS != nil {
		out.S3AccessKeyID, out.S3SecretAccessKey, out.S3SessionToken = tc.AWS.AccessKeyID, tc.AWS.SecretAccessKey, tc.AWS.SessionToken
	}
	if tc.Azure != nil {
		out.AzureSASToken = tc.Azure.SASToken
	}
	if tc.GCP != nil {
		out.GCSOAuthToken = tc.GCP.OAuthToken
	}
	if tc.ExpirationTime > 0 {
		out.Expiration = time.UnixMilli(tc.ExpirationTime)
	}
	return out, nil
}
