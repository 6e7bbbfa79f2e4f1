package catalog

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Credentials is a plain set of vended storage credentials, shaped so that
// sync can copy it field by field into deltalog.Credentials (catalog does not
// import deltalog). Only the relevant cloud's fields are set.
type Credentials struct {
	S3AccessKeyID     string
	S3SecretAccessKey string
	S3SessionToken    string
	AzureSASToken     string
	GCSOAuthToken     string
	// Expiration is when the credentials stop working (zero: unknown).
	Expiration time.Time
}

// String redacts the secrets.
func (c Credentials) String() string {
	var kinds []string
	if c.S3AccessKeyID != "" || c.S3SecretAccessKey != "" {
		kinds = append(kinds, "s3")
	}
	if c.AzureSASToken != "" {
		kinds = append(kinds, "azure")
	}
	if c.GCSOAuthToken != "" {
		kinds = append(kinds, "gcs")
	}
	return fmt.Sprintf("catalog.Credentials{%s [REDACTED] expires %s}", strings.Join(kinds, ","), c.Expiration.UTC().Format(time.RFC3339))
}

// GoString redacts the secrets.
func (c Credentials) GoString() string { return c.String() }

// Vendor is implemented by a kind that vends storage credentials for a
// table's log (Unity Catalog's temporary table credentials): sync reads
// the log with them when Options.VendedCredentials is set.
type Vendor interface {
	// ReadCredentials returns READ credentials for rec's location.
	ReadCredentials(ctx context.Context, rec Record) (Credentials, error)
}
