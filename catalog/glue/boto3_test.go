package glue

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/internal/fakeglue"
	"github.com/deltasync/deltasync/internal/testenv"
)

// boto3Read reads db.name with boto3 (another SDK, the one most Glue tools
// use) straight from moto and returns the Table as JSON values, times as
// RFC 3339 UTC, with the fields Glue owns dropped.
const boto3Read = `
import boto3, datetime, json, sys
url, db, name = sys.argv[1:4]
c = boto3.client("glue", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="testing", aws_secret_access_key="testing")
t = c.get_table(DatabaseName=db, Name=name)["Table"]
for k in ("DatabaseName", "CreateTime", "UpdateTime", "CreatedBy", "IsRegisteredWithLakeFormation",
          "CatalogId", "VersionId", "IsMultiDialectView", "IsMaterializedView"):
    t.pop(k, None)
def enc(o):
    if isinstance(o, datetime.datetime):
        return o.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    raise TypeError(type(o))
print(json.dumps(t, default=enc))
`

// prune drops what is absent on one side and empty on the other (nil,
// "", false, 0, [], {}), so two records compare by what they hold.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = prune(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i := range x {
			x[i] = prune(x[i])
		}
		return x
	case string:
		if x == "" {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	case float64:
		if x == 0 {
			return nil
		}
	}
	return v
}

// TestBoto3ReadsWhatGoWrote: the record boto3 reads back after deltasync's
// write is, field for field, the TableInput Go sent (nothing lost or
// added on the wire), and it still holds every field of the Spark record
// it was applied to.
func TestBoto3ReadsWhatGoWrote(t *testing.T) {
	ctx := context.Background()
	c, _, db := motoClient(t, Config{})
	python := testenv.Getenv(t, fakeglue.MotoPythonEnv, testenv.External, fakeglue.MotoPythonEnv+" unset: run .ci/setup-moto.sh start")
	motoURL := fakeglue.MotoURL(t)
	if err := c.CreateTable(ctx, db, InputOf(sparkTable())); err != nil {
		t.Fatal(err)
	}
	tb, err := c.GetTable(ctx, db, "events")
	if err != nil {
		t.Fatal(err)
	}
	in, err := Apply(tb, desired())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, db, in, aws.ToString(tb.VersionId)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, python, "-c", boto3Read, motoURL, db, "events")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3: %v: %s", err, stderr.String())
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("boto3 output %s: %v", out, err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(prune(want), prune(got)); d != "" {
		t.Errorf("boto3's record differs from the TableInput Go wrote (-go +boto3):\n%s", d)
	}
	if got.(map[string]any)["Owner"] != "hadoop" || got.(map[string]any)["Description"] != "set in the console" {
		t.Errorf("fields of the Spark record lost: %s", out)
	}
}
