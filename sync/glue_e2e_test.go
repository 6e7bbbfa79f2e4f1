package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog/glue"
	"github.com/deltasync/deltasync/internal/fakeglue"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// boto3Glue is another SDK (boto3, in moto's venv) on moto: "bucket B"
// creates an S3 bucket, "table DB NAME" prints a Glue table as JSON.
const boto3Glue = `
import boto3, datetime, json, sys
url, what = sys.argv[1:3]
kw = dict(endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
if what == "bucket":
    boto3.client("s3", **kw).create_bucket(Bucket=sys.argv[3])
else:
    t = boto3.client("glue", **kw).get_table(DatabaseName=sys.argv[3], Name=sys.argv[4])["Table"]
    print(json.dumps(t, default=lambda o: o.isoformat() if isinstance(o, datetime.datetime) else str(o)))
`

// boto3Table is a Glue table as boto3 reads it.
type boto3Table struct {
	Name              string
	TableType         string
	Parameters        map[string]string
	PartitionKeys     []boto3Column
	StorageDescriptor struct {
		Columns   []boto3Column
		Location  string
		SerdeInfo struct{ Parameters map[string]string }
	}
}

type boto3Column struct{ Name, Type string }

// deltarsLog is the log as delta-rs reads it (deltars_s3.py read).
type deltarsLog struct {
	Version int64
	Schema  struct {
		Fields []struct {
			Name     string
			Type     any
			Nullable bool
		}
	}
	PartitionColumns []string `json:"partition_columns"`
	Configuration    map[string]string
	Description      string
}

// TestGlueDeltaRSOnMotoS3 is the Glue end to end: delta-rs writes two
// tables to moto's S3; one is registered in Glue as Spark on EMR
// registers it (placeholder column, no Delta state), the other as Athena
// does (table_type=DELTA, real columns of version 0); delta-rs then adds
// a column. One deltasync cycle syncs both records, and boto3 — another
// SDK, straight to moto — reads each back, compared with the log as
// delta-rs reads it: the version, the schema (Spark's key, or the real
// columns and partition keys), the properties and the description, each
// record in its own shape. The next cycle writes nothing.
func TestGlueDeltaRSOnMotoS3(t *testing.T) {
	e := newGlueEnv(t)
	py := deltarsPython(t)
	boto := testenv.Getenv(t, fakeglue.MotoPythonEnv, testenv.External, fakeglue.MotoPythonEnv+" unset: run .ci/setup-moto.sh start")
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_SESSION_TOKEN", "")
	_ = os.Unsetenv("AWS_SESSION_TOKEN")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(python string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, python, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(python), args[:min(len(args), 3)], err, stderr.String())
		}
		return out
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	bucket := "ds-glue-" + hex.EncodeToString(b)
	run(boto, "-c", boto3Glue, e.moto, "bucket", bucket)
	script := filepath.Join("testdata", "glue", "deltars_s3.py")
	uri := func(name string) string { return "s3://" + bucket + "/" + name }
	for _, n := range []string{"spark_t", "athena_t"} {
		run(py, script, e.moto, uri(n), "create")
	}
	if err := e.plain.CreateTable(ctx, e.db, sparkInput("spark_t", uri("spark_t"))); err != nil {
		t.Fatal(err)
	}
	athena := &types.TableInput{Name: aws.String("athena_t"), TableType: aws.String("EXTERNAL_TABLE"),
		Parameters:    map[string]string{"EXTERNAL": "TRUE", glue.KeyTableType: "DELTA"},
		PartitionKeys: []types.Column{{Name: aws.String("dt"), Type: aws.String("date")}},
		StorageDescriptor: &types.StorageDescriptor{Location: aws.String(uri("athena_t")),
			Columns: []types.Column{{Name: aws.String("id"), Type: aws.String("bigint")}, {Name: aws.String("name"), Type: aws.String("string")}}}}
	if err := e.plain.CreateTable(ctx, e.db, athena); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"spark_t", "athena_t"} {
		run(py, script, e.moto, uri(n), "evolve")
	}

	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{glue.DefaultKindName + "." + e.db + ".*"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The bucket's own options (storage.buckets[]): S3 clients are shared
	// by the process per URL parameters, so an ambient AWS_ENDPOINT_URL_S3
	// would not reach a client another test made first.
	opts := map[string]string{"endpoint": e.moto, "region": "us-east-1", "use_path_style": "true", "disable_https": "true"}
	pol, err := sync.NewStoragePolicy([]string{"s3://" + bucket + "/**"}, []sync.BucketOptions{{Location: "s3://" + bucket, Options: opts}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sync.New(sync.Options{Catalog: glue.NewKind(e.client, glue.KindOptions{}), Selector: sel, Storage: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	rep := r.Sync(ctx)
	for _, res := range rep.Results {
		if res.Outcome != sync.OutcomeSynced {
			t.Fatalf("%s: %s %s (%s)", res.Table, res.Outcome, res.ErrorReason, res.Reason)
		}
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2: %s", len(rep.Results), rep.Summary())
	}

	hive := map[string]string{"long": "bigint", "string": "string", "date": "date", "double": "double"}
	for _, n := range []string{"spark_t", "athena_t"} {
		var log deltarsLog
		if err := json.Unmarshal(run(py, script, e.moto, uri(n), "read"), &log); err != nil {
			t.Fatal(err)
		}
		var got boto3Table
		if err := json.Unmarshal(run(boto, "-c", boto3Glue, e.moto, "table", e.db, n), &got); err != nil {
			t.Fatal(err)
		}
		p := got.Parameters
		if log.Version != 1 || p[glue.KeyLastUpdateVersion] != strconv.FormatInt(log.Version, 10) {
			t.Errorf("%s: record at version %q, the log at %d", n, p[glue.KeyLastUpdateVersion], log.Version)
		}
		if p[glue.KeyComment] != log.Description || log.Description == "" {
			t.Errorf("%s: comment %q, the log's description %q", n, p[glue.KeyComment], log.Description)
		}
		for k, v := range log.Configuration {
			if p[k] != v {
				t.Errorf("%s: property %s = %q, the log's %q", n, k, p[k], v)
			}
		}
		// The log's schema, as the record's shape holds it.
		var logCols, logParts []boto3Column
		for _, f := range log.Schema.Fields {
			typ, _ := f.Type.(string)
			c := boto3Column{Name: f.Name, Type: hive[typ]}
			if slices.Contains(log.PartitionColumns, f.Name) {
				logParts = append(logParts, c)
			} else {
				logCols = append(logCols, c)
			}
		}
		schemaKey := glue.KeySchema
		if n == "spark_t" {
			if len(got.StorageDescriptor.Columns) != 1 || got.StorageDescriptor.Columns[0].Name != "col" ||
				got.StorageDescriptor.SerdeInfo.Parameters[glue.SerdePath] != uri(n) || p[glue.KeyPartCol+"0"] != "dt" {
				t.Errorf("spark_t lost its shape: %+v", got)
			}
		} else {
			schemaKey = glue.KeyLogSchema
			if !slices.Equal(got.StorageDescriptor.Columns, logCols) || !slices.Equal(got.PartitionKeys, logParts) ||
				got.StorageDescriptor.Location != uri(n) || p[glue.KeyProvider] != "" {
				t.Errorf("athena_t: columns %v partitioned by %v (provider %q); the log's %v by %v",
					got.StorageDescriptor.Columns, got.PartitionKeys, p[glue.KeyProvider], logCols, logParts)
			}
		}
		var stored deltarsLog
		if err := json.Unmarshal([]byte(`{"schema":`+p[schemaKey]+`}`), &stored); err != nil {
			t.Fatalf("%s: %s %q: %v", n, schemaKey, p[schemaKey], err)
		}
		if a, b := mustJSON(t, stored.Schema), mustJSON(t, log.Schema); a != b {
			t.Errorf("%s: %s holds %s, the log %s", n, schemaKey, a, b)
		}
	}

	e.proxy.ResetCounts()
	rep = r.Sync(ctx)
	if rep.Count(sync.OutcomeUnchanged) != 2 || e.proxy.Count("UpdateTable") != 0 {
		t.Errorf("the next cycle: %s, %d UpdateTable; want both unchanged, nothing written", rep.Summary(), e.proxy.Count("UpdateTable"))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
