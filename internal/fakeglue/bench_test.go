package fakeglue

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
)

// BenchmarkThroughProxy measures what the proxy adds to a call, with the
// real SDK client: GetTable straight to moto and through the proxy, and a
// guarded UpdateTable through the proxy (its own GetTable to moto first).
func BenchmarkThroughProxy(b *testing.B) {
	moto := MotoURL(b)
	p, err := New(moto)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name, endpoint string
	}{{"GetTable/moto", moto}, {"GetTable/proxy", p.URL}} {
		b.Run(tc.name, func(b *testing.B) {
			c, db := benchSetup(b, tc.endpoint)
			in := &sdkglue.GetTableInput{DatabaseName: aws.String(db), Name: aws.String("t")}
			for b.Loop() {
				if _, err := c.GetTable(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("UpdateTable-guarded/proxy", func(b *testing.B) {
		c, db := benchSetup(b, p.URL)
		v := 0
		for b.Loop() {
			out, err := c.GetTable(ctx, &sdkglue.GetTableInput{DatabaseName: aws.String(db), Name: aws.String("t")})
			if err != nil {
				b.Fatal(err)
			}
			v++
			if _, err := c.UpdateTable(ctx, &sdkglue.UpdateTableInput{DatabaseName: aws.String(db),
				TableInput: tableInput("t", v), VersionId: out.Table.VersionId, SkipArchive: aws.Bool(true)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchSetup(b *testing.B, endpoint string) (*sdkglue.Client, string) {
	b.Helper()
	c := sdk(b, endpoint, 1)
	db := freshDB(b, c)
	createTable(b, c, db, "t")
	return c, db
}
