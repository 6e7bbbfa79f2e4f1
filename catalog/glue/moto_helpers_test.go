package glue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"

	"github.com/deltasync/deltasync/internal/fakeglue"
)

// isolate keeps the SDK off the machine's AWS config and off AWS itself
// (glue-notes §7.4): empty shared files, no IMDS, no env endpoints.
func isolate(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_GLUE", "AWS_PROFILE"} {
		t.Setenv(k, "") // restored when the test ends
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
}

// motoClient is a Client against a fresh proxy in front of moto, and a
// database of its own (moto is shared by every test of the run).
func motoClient(t *testing.T, cfg Config) (*Client, *fakeglue.Proxy, string) {
	t.Helper()
	p := fakeglue.Start(t)
	isolate(t)
	cfg.Region, cfg.Endpoint = "us-east-1", p.URL
	cfg.Credentials = credentials.NewStaticCredentialsProvider("testing", "testing", "")
	c, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db := "gl_" + hex.EncodeToString(b)
	if err := c.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// moto is shared by every test of the run: leave it as found.
	t.Cleanup(func() {
		_, _ = c.API().DeleteDatabase(context.Background(), &sdkglue.DeleteDatabaseInput{Name: aws.String(db)})
	})
	p.ResetCounts()
	return c, p, db
}
