package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/deltasync/deltasync/sync/change"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/deltasync/deltasync/catalog/glue"
	"github.com/deltasync/deltasync/internal/fakeglue"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/kindtest"
)

// plugGlue is the only line that plugs a Glue client into deltasync's
// options.
func plugGlue(o *sync.Options, c *glue.Client) {
	o.Catalog = glue.NewKind(c, glue.KindOptions{IgnoreProperties: o.Diff.IgnoreProperties})
}

func plugGlueApply(o *change.ApplyOptions, c *glue.Client) {
	o.Catalog = glue.NewKind(c, glue.KindOptions{})
}

// glueEnv is moto (DELTASYNC_MOTO_URL) behind a fakeglue proxy, a client
// through the proxy (deltasync's, its requests counted by the proxy), a
// plain client straight to moto (the test's own and other writers'), and
// a database of the test's own, deleted when it ends.
type glueEnv struct {
	t      testing.TB
	moto   string
	proxy  *fakeglue.Proxy
	client *glue.Client
	plain  *glue.Client
	db     string
}

// newGlueEnv isolates the AWS SDK from the machine's AWS config (no
// shared files, no instance metadata, no endpoint from the environment)
// and sets up a glueEnv.
func newGlueEnv(t *testing.T) *glueEnv {
	t.Helper()
	moto := fakeglue.MotoURL(t)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_GLUE": "", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v) // restored when the test ends
		if v == "" {
			_ = os.Unsetenv(k) // unset, not empty: boto3 takes "" for a profile's name
		}
	}
	e := &glueEnv{t: t, moto: moto, proxy: fakeglue.Start(t), plain: glueClient(t, moto)}
	e.client = glueClient(t, e.proxy.URL)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	e.db = "ds_" + hex.EncodeToString(b)
	if err := e.plain.CreateDatabase(context.Background(), e.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.plain.API().DeleteDatabase(context.Background(), &sdkglue.DeleteDatabaseInput{Name: aws.String(e.db)})
	})
	return e
}

// glueClient is a Glue client of endpoint (moto or a proxy in front of it).
func glueClient(t testing.TB, endpoint string) *glue.Client {
	t.Helper()
	c, err := glue.New(context.Background(), glue.Config{Region: "us-east-1", Endpoint: endpoint,
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// url is the catalog URL of the proxy, as a saved plan records it.
func (e *glueEnv) url() string { return "glue://us-east-1?endpoint=" + e.proxy.URL }

// sparkInput is the record Spark on EMR leaves in Glue for a Delta
// data-source table through the Glue Hive client: provider delta, the
// placeholder column, the real location in the serde path, sd.Location a
// placeholder path, no Delta state.
func sparkInput(name, location string) *types.TableInput {
	return &types.TableInput{
		Name: aws.String(name), Owner: aws.String("hadoop"), TableType: aws.String("EXTERNAL_TABLE"),
		Parameters: map[string]string{
			"EXTERNAL": "TRUE", "spark.sql.create.version": "3.5.1", "spark.sql.partitionProvider": "catalog",
			glue.KeyProvider: glue.ProviderDelta,
		},
		PartitionKeys: []types.Column{},
		StorageDescriptor: &types.StorageDescriptor{
			Columns:      glue.PlaceholderColumns(),
			Location:     aws.String("file:/tmp/" + name + "-__PLACEHOLDER__"),
			InputFormat:  aws.String("org.apache.hadoop.mapred.SequenceFileInputFormat"),
			OutputFormat: aws.String("org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"),
			SerdeInfo: &types.SerDeInfo{SerializationLibrary: aws.String("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
				Parameters: map[string]string{glue.SerdePath: location, "serialization.format": "1"}},
			NumberOfBuckets: -1,
		},
	}
}

// glueHarness is Glue (moto behind fakeglue) under the kind contract;
// athena: the tables are registered as Athena registers them (real
// columns and partition keys, table_type=DELTA), else as Spark on EMR.
type glueHarness struct {
	e      *glueEnv
	athena bool
}

func newGlueHarness(t *testing.T, athena bool) *glueHarness {
	return &glueHarness{e: newGlueEnv(t), athena: athena}
}

// athenaInput is the record Athena's CREATE EXTERNAL TABLE … TBLPROPERTIES
// ('table_type'='DELTA') leaves: the columns of the log at create, the
// location in sd.Location, no provider, no Spark keys, no Delta state.
func athenaInput(t *testing.T, name, location, schema string) *types.TableInput {
	t.Helper()
	cols, keys, err := glue.LogColumns(schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	gc := func(cs []glue.Column) []types.Column {
		out := []types.Column{}
		for _, c := range cs {
			out = append(out, types.Column{Name: aws.String(c.Name), Type: aws.String(c.Type)})
		}
		return out
	}
	return &types.TableInput{
		Name: aws.String(name), Owner: aws.String("athena"), TableType: aws.String("EXTERNAL_TABLE"),
		Parameters:    map[string]string{"EXTERNAL": "TRUE", glue.KeyTableType: glue.TableTypeDelta},
		PartitionKeys: gc(keys),
		StorageDescriptor: &types.StorageDescriptor{
			Columns: gc(cols), Location: aws.String(location),
			InputFormat:  aws.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"),
			OutputFormat: aws.String("org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
			SerdeInfo:    &types.SerDeInfo{SerializationLibrary: aws.String("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")},
		},
	}
}

func (h *glueHarness) CatalogName() string { return glue.DefaultKindName }
func (h *glueHarness) Schema() string      { return h.e.db }
func (h *glueHarness) URL() string         { return h.e.url() }

func (h *glueHarness) Options(_ *testing.T, base sync.Options) sync.Options {
	plugGlue(&base, h.e.client)
	return base
}

func (h *glueHarness) ApplyOptions(_ *testing.T, base change.ApplyOptions) change.ApplyOptions {
	plugGlueApply(&base, h.e.client)
	return base
}

// Register is Spark's registration of a Delta table (no Delta state), or
// Athena's (the log's columns at create, no Delta state).
func (h *glueHarness) Register(t *testing.T, name, dir string) {
	t.Helper()
	in := sparkInput(name, "file://"+dir)
	if h.athena {
		in = athenaInput(t, name, "file://"+dir, kindtest.Schema)
	}
	if err := h.e.plain.CreateTable(context.Background(), h.e.db, in); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

func (h *glueHarness) Record(t *testing.T, name string) (kindtest.Record, bool) {
	t.Helper()
	got, err := h.e.plain.GetTable(context.Background(), h.e.db, name)
	if errors.Is(err, glue.ErrNotFound) {
		return kindtest.Record{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(got.Parameters[glue.KeyLastUpdateVersion], 10, 64)
	if err != nil {
		v = -1
	}
	return kindtest.Record{Version: v, Props: maps.Clone(got.Parameters)}, true
}

// OtherWriter is another client's UpdateTable of the whole record read,
// guarded by its VersionId (as Trino and Iceberg write), straight to moto.
func (h *glueHarness) OtherWriter(t *testing.T, name string, ed kindtest.Edit) {
	t.Helper()
	ctx := context.Background()
	got, err := h.e.plain.GetTable(ctx, h.e.db, name)
	if err != nil {
		t.Fatal(err)
	}
	in := glue.InputOf(got)
	maps.Copy(in.Parameters, ed.Props)
	if ed.Version >= 0 {
		in.Parameters[glue.KeyLastUpdateVersion] = strconv.FormatInt(ed.Version, 10)
		in.Parameters[glue.KeyLastCommitTimestamp] = strconv.FormatInt(ed.Timestamp, 10)
	}
	if err := h.e.plain.Update(ctx, h.e.db, in, aws.ToString(got.VersionId)); err != nil {
		t.Fatalf("the other writer's update of %s: %v", name, err)
	}
}

// HoldNextWrite holds deltasync's next UpdateTable at the proxy, before
// its VersionId is checked, until interfere has run.
func (h *glueHarness) HoldNextWrite(t *testing.T, _ string, base sync.Options, interfere func()) sync.Options {
	hold := h.e.proxy.Hold("UpdateTable")
	done := make(chan struct{})
	t.Cleanup(func() { close(done); hold.Release() })
	go func() {
		select {
		case <-hold.Arrived():
			interfere()
			hold.Release()
		case <-done:
		}
	}()
	return h.Options(t, base)
}

// Refusing is a proxy that answers every UpdateTable with Glue's
// InvalidInputException (the same request refused every time).
func (h *glueHarness) Refusing(t *testing.T, _, _ string, base sync.Options) sync.Options {
	p := fakeglue.Start(t)
	p.Inject("UpdateTable", fakeglue.Fault{Type: "InvalidInputException",
		Message: "Parameter value is longer than the maximum of 512000 characters", Times: 1000})
	plugGlue(&base, glueClient(t, p.URL))
	return base
}

func (h *glueHarness) Requests() map[string]int {
	m := h.e.proxy.Calls() // deltasync's calls, not the SDK's retries of one
	h.e.proxy.ResetCounts()
	return m
}

func (h *glueHarness) IsWrite(op string) bool {
	return strings.HasPrefix(op, "Update") || strings.HasPrefix(op, "Create") || strings.HasPrefix(op, "Delete") ||
		strings.HasPrefix(op, "BatchDelete")
}

// SteadyRequests: GetDatabases (one page per 100 databases: moto is
// shared by every test of the run) and one GetTables page per 100 tables,
// nothing per table.
func (h *glueHarness) SteadyRequests(n int) int {
	dbs, err := h.e.plain.Databases(context.Background())
	if err != nil {
		h.e.t.Fatal(err)
	}
	return (len(dbs)+glue.PageSize-1)/glue.PageSize + (n+glue.PageSize-1)/glue.PageSize
}

// Untouched is the GetTable answer, field by field, without what
// deltasync owns: the VersionId and UpdateTime every write moves, the
// parameters it owns (glueOwned), and in an Athena record the columns'
// and partition keys' names, types and comments (their parameters are
// kept). A Spark record's columns are Spark's placeholder, which
// deltasync never touches: they are compared.
func (h *glueHarness) Untouched(t *testing.T, name string) string {
	t.Helper()
	got, err := h.e.plain.GetTable(context.Background(), h.e.db, name)
	if err != nil {
		t.Fatal(err)
	}
	tb := *got
	tb.VersionId, tb.UpdateTime = nil, nil
	if h.athena {
		cols := func(cs []types.Column) []types.Column {
			out := make([]types.Column, len(cs))
			for i, c := range cs {
				out[i] = types.Column{Parameters: c.Parameters}
			}
			return out
		}
		sd := *tb.StorageDescriptor
		sd.Columns, tb.PartitionKeys = cols(sd.Columns), cols(tb.PartitionKeys)
		tb.StorageDescriptor = &sd
	}
	var lines []string
	for k, v := range tb.Parameters {
		if !glueOwned(k, tb.Parameters) {
			lines = append(lines, fmt.Sprintf("Parameters.%s=%s", k, v))
		}
	}
	tb.Parameters = nil
	b, err := json.Marshal(tb)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		lines = append(lines, k+"="+string(v))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// glueOwned reports whether a parameter is one deltasync owns in a Glue
// record (docs/kinds/glue.md, "What deltasync owns").
func glueOwned(k string, p map[string]string) bool {
	var synced []string
	_ = json.Unmarshal([]byte(p[glue.KeySyncedProperties]), &synced)
	switch {
	case k == glue.KeyComment, k == glue.KeySyncedProperties, k == glue.KeyLogSchema, k == glue.KeyTrinoVersion, k == glue.KeyTrinoSchema:
		return true
	case strings.HasPrefix(k, "delta."), strings.HasPrefix(k, glue.KeySchema), slices.Contains(synced, k):
		return true
	}
	return false
}
