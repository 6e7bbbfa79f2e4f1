package main

import (
	"context"
	"errors"
	"github.com/deltasync/deltasync/sync/metrics"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog/glue"
	"github.com/deltasync/deltasync/internal/fakeglue"
)

// glueSDKEnv keeps the AWS SDK of the test process (deltasync's default
// credential chain) off the machine's AWS config and on static test
// credentials.
func glueSDKEnv(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_GLUE": "", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v) // restored when the test ends
		if v == "" {
			_ = os.Unsetenv(k)
		}
	}
}

// glueExitKind is Glue (moto behind fakeglue) for TestExitCodesEveryKind:
// a database of the test's own, tables registered as Spark on EMR leaves
// them (no Delta state).
func glueExitKind(t *testing.T) exitKind {
	t.Helper()
	p := fakeglue.Start(t)
	glueSDKEnv(t)
	c, err := glue.New(context.Background(), glue.Config{Region: "us-east-1", Endpoint: p.URL,
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	if err != nil {
		t.Fatal(err)
	}
	db := "ds_exit_" + randomHex()
	if err := c.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.API().DeleteDatabase(context.Background(), &sdkglue.DeleteDatabaseInput{Name: aws.String(db)})
	})
	return exitKind{url: "glue://us-east-1?endpoint=" + p.URL, prefix: glue.DefaultKindName + "." + db,
		register: func(t *testing.T, name, dir string) {
			t.Helper()
			in := &types.TableInput{Name: aws.String(name), TableType: aws.String("EXTERNAL_TABLE"),
				Parameters: map[string]string{"EXTERNAL": "TRUE", glue.KeyProvider: glue.ProviderDelta},
				StorageDescriptor: &types.StorageDescriptor{Columns: glue.PlaceholderColumns(),
					Location:  aws.String("file:/tmp/" + name + "-__PLACEHOLDER__"),
					SerdeInfo: &types.SerDeInfo{Parameters: map[string]string{glue.SerdePath: "file://" + dir}}}}
			if err := c.CreateTable(context.Background(), db, in); err != nil {
				t.Fatal(err)
			}
		}}
}

// TestGlueSettings: catalog.url glue:// selects the Glue kind, named by
// catalog.name (default awsdatacatalog); a bad URL names its field, and
// the other kinds' keys are refused by name.
func TestGlueSettings(t *testing.T) {
	c := &cli{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}
	settingsOf := func(t *testing.T, mutate func(*catalogConfig)) (settings, error) {
		t.Helper()
		cfg := defaultConfig()
		cfg.Catalog.URL = "glue://eu-west-1?catalog_id=123456789012"
		cfg.Tables = []tableRule{{Include: patternList{"awsdatacatalog.sales.*"}}}
		if mutate != nil {
			mutate(&cfg.Catalog)
		}
		return c.settingsFor(cfg, selectFromConfig)
	}
	s, err := settingsOf(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.glue == nil || s.hms != nil || s.glue.name != glue.DefaultKindName || s.glue.cfg.Region != "eu-west-1" ||
		s.glue.cfg.CatalogID != "123456789012" || !s.glue.cfg.SkipArchive() || s.glue.cfg.Timeout != 30*time.Second {
		t.Fatalf("glue settings %+v", s.glue)
	}
	s, err = settingsOf(t, func(cc *catalogConfig) { cc.Name = "lake" })
	if err != nil || s.glue.name != "lake" {
		t.Fatalf("catalog.name lake: %v %+v", err, s.glue)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*catalogConfig)
		want   string
	}{
		{"no region", func(cc *catalogConfig) { cc.URL = "glue://" }, "catalog.url: catalog URL"},
		{"unknown parameter", func(cc *catalogConfig) { cc.URL = "glue://eu-west-1?skip=1" }, `unknown parameter "skip"`},
		{"columns", func(cc *catalogConfig) { cc.Columns = "real" }, "catalog.columns: a Hive Metastore's"},
		{"token_file", func(cc *catalogConfig) { cc.TokenFile = "/tmp/x" }, "catalog.token_file: Unity Catalog's"},
		{"max_rps", func(cc *catalogConfig) { cc.MaxRPS = 5 }, "catalog.max_rps: Unity Catalog's"},
		{"a dotted name", func(cc *catalogConfig) { cc.Name = "a.b" }, `catalog.name "a.b": want a plain name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := settingsOf(t, tc.mutate); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestObserveGlue: Glue's answers land in the catalog request metrics
// with a status per class (Glue answers every client error 400).
func TestObserveGlue(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "test")
	p := fakeglue.Start(t)
	glueSDKEnv(t)
	c, err := glue.New(context.Background(), glue.Config{Region: "us-east-1", Endpoint: p.URL, RetryMaxAttempts: 1,
		Observer: observeGlue(m), Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := "ds_obs_" + randomHex()
	if err := c.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.API().DeleteDatabase(ctx, &sdkglue.DeleteDatabaseInput{Name: aws.String(db)}) })
	if _, err := c.GetTable(ctx, db, "nope"); !errors.Is(err, glue.ErrNotFound) {
		t.Fatalf("GetTable of a missing table: %v", err)
	}
	p.Inject("GetDatabases", fakeglue.Throttling)
	_, _ = c.Databases(ctx)
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "deltasync_catalog_requests_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range mt.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			got[l["operation"]+" "+l["code"]] = mt.GetCounter().GetValue()
		}
	}
	for _, want := range []string{"CreateDatabase 200", "GetTable 404", "GetDatabases 429"} {
		if got[want] != 1 {
			t.Errorf("%s: %v requests counted, want 1 (all: %v)", want, got[want], got)
		}
	}
}
