package fakeglue

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
)

// TestMotoStillIgnoresWhatTheProxyEnforces talks to moto directly. It
// fails when moto starts to enforce VersionId, honour SkipArchive or page
// GetTables: then the proxy's part is moto's, and the proxy (and this
// test) should shrink.
func TestMotoStillIgnoresWhatTheProxyEnforces(t *testing.T) {
	c := sdk(t, MotoURL(t), 1)
	db := freshDB(t, c)
	for _, n := range []string{"a", "b", "c", "d"} {
		createTable(t, c, db, n)
	}
	v := versionID(t, c, db, "a")
	if err := update(c, db, "a", 1, aws.String(v), aws.Bool(true)); err != nil {
		t.Fatal(err)
	}
	if err := update(c, db, "a", 2, aws.String(v), aws.Bool(true)); err != nil {
		t.Errorf("moto now refuses a stale VersionId (%v): the proxy's guard may be moto's now", err)
	}
	vs, err := c.GetTableVersions(context.Background(), &sdkglue.GetTableVersionsInput{DatabaseName: aws.String(db), TableName: aws.String("a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.TableVersions) < 3 {
		t.Errorf("moto kept %d versions after two SkipArchive updates: it honours SkipArchive now", len(vs.TableVersions))
	}
	out, err := c.GetTables(context.Background(), &sdkglue.GetTablesInput{DatabaseName: aws.String(db), MaxResults: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TableList) != 4 || out.NextToken != nil {
		t.Errorf("moto answered %d tables (NextToken %v) to MaxResults 2: it pages now", len(out.TableList), out.NextToken)
	}
}
