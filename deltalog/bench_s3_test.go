package deltalog

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// BenchmarkLoadS3 measures Load of the 10k-file fixture through s3blob
// against an in-process gofakes3 server: the same work as BenchmarkLoad plus
// one HTTP round trip per request, which shows what the request count costs
// (a real S3 GET is 10-30 ms, so multiply gets/op accordingly).
func BenchmarkLoadS3(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	ctx := context.Background()
	dir := fixtureDir(b, 10_000)
	tbl := openS3BenchTable(b, dir)
	if snap, err := tbl.Load(ctx, LoadOptions{}); err != nil || snap.Version != fixtureLatest {
		b.Fatalf("Load = %v, %v; want version %d", snap, err, fixtureLatest)
	}
	timeLoads(b, ctx, tbl)
}

// openS3BenchTable copies the _delta_log of the local table at dir into an
// in-process gofakes3 bucket on loopback and opens it through s3blob. The
// server and the table are closed when b ends.
func openS3BenchTable(b *testing.B, dir string) *Table {
	b.Helper()
	ctx := context.Background()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	b.Cleanup(srv.Close)
	creds := Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}
	u := "s3://lake/t?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	seed, _, err := openBucket(ctx, u, creds)
	if err != nil {
		b.Fatal(err)
	}
	defer seed.Close()
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "_delta_log", e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := seed.WriteAll(ctx, logDir+e.Name(), data, nil); err != nil {
			b.Fatal(err)
		}
	}
	tbl, err := Open(ctx, u, WithCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tbl.Close() })
	return tbl
}
