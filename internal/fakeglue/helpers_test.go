package fakeglue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// sdk is the real AWS SDK for Go v2 Glue client, pointed at endpoint with
// an explicit BaseEndpoint and dummy keys, isolated from the machine's AWS
// config (glue-notes §7.4: env endpoints can be ignored by shared config,
// and a test must never reach AWS).
func sdk(t testing.TB, endpoint string, maxAttempts int) *sdkglue.Client {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_GLUE", "")
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("testing", "testing", "")))
	if err != nil {
		t.Fatal(err)
	}
	return sdkglue.NewFromConfig(cfg, func(o *sdkglue.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = maxAttempts
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			so.RateLimiter = ratelimit.None
		})
	})
}

// freshDB creates a database with a unique name (moto is shared by every
// test of the run) and returns its name.
func freshDB(t testing.TB, c *sdkglue.Client) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "fg_" + hex.EncodeToString(b)
	if _, err := c.CreateDatabase(context.Background(), &sdkglue.CreateDatabaseInput{
		DatabaseInput: &types.DatabaseInput{Name: aws.String(name)},
	}); err != nil {
		t.Fatal(err)
	}
	return name
}

func tableInput(name string, version int) *types.TableInput {
	return &types.TableInput{
		Name:       aws.String(name),
		TableType:  aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{"spark.sql.sources.provider": "delta", "delta.lastUpdateVersion": strconv.Itoa(version)},
		StorageDescriptor: &types.StorageDescriptor{
			Columns:  []types.Column{{Name: aws.String("col"), Type: aws.String("array<string>")}},
			Location: aws.String("s3://lake/" + name),
		},
	}
}

func createTable(t testing.TB, c *sdkglue.Client, db, name string) {
	t.Helper()
	if _, err := c.CreateTable(context.Background(), &sdkglue.CreateTableInput{
		DatabaseName: aws.String(db), TableInput: tableInput(name, 0),
	}); err != nil {
		t.Fatal(err)
	}
}

func versionID(t testing.TB, c *sdkglue.Client, db, name string) string {
	t.Helper()
	out, err := c.GetTable(context.Background(), &sdkglue.GetTableInput{DatabaseName: aws.String(db), Name: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Table.VersionId)
}

func update(c *sdkglue.Client, db, name string, version int, versionID *string, skip *bool) error {
	_, err := c.UpdateTable(context.Background(), &sdkglue.UpdateTableInput{
		DatabaseName: aws.String(db), TableInput: tableInput(name, version), VersionId: versionID, SkipArchive: skip,
	})
	return err
}
