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
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	creds := Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}
	query := "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	seed, _, err := openBucket(ctx, "s3://lake/t"+query, creds)
	if err != nil {
		b.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "_delta_log", e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := seed.WriteAll(ctx, logDir+e.Name(), data, nil); err != nil {
			b.Fatal(err)
		}
	}
	_ = seed.Close()
	tbl, err := Open(ctx, "s3://lake/t"+query, WithCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	defer tbl.Close()
	if snap, err := tbl.Load(ctx, LoadOptions{}); err != nil || snap.Version != fixtureLatest {
		b.Fatalf("Load = %v, %v; want version %d", snap, err, fixtureLatest)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(n)/1e6, "cpu-ms/op")
}
