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

// BenchmarkLoadLayoutsS3 is BenchmarkLoadLayouts through s3blob against an
// in-process gofakes3 server on loopback (issue #9's "over S3" target: the
// 1M tables in at most 3x their local time).
//
//	go test ./deltalog -run '^$' -bench BenchmarkLoadLayoutsS3 -benchmem -count 5
func BenchmarkLoadLayoutsS3(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	ctx := context.Background()
	for _, tc := range layoutBenchTables(b) {
		b.Run(tc[0], func(b *testing.B) {
			backend := s3mem.New()
			if err := backend.CreateBucket("lake"); err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(gofakes3.New(backend).Server())
			defer srv.Close()
			creds := Credentials{S3AccessKeyID: "AKIDEXAMPLE", S3SecretAccessKey: "secret"}
			u := "s3://lake/t?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
			seed, _, err := openBucket(ctx, u, creds)
			if err != nil {
				b.Fatal(err)
			}
			entries, err := os.ReadDir(filepath.Join(tc[1], "_delta_log"))
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(tc[1], "_delta_log", e.Name()))
				if err != nil {
					b.Fatal(err)
				}
				if err := seed.WriteAll(ctx, logDir+e.Name(), data, nil); err != nil {
					b.Fatal(err)
				}
			}
			_ = seed.Close()
			tbl, err := Open(ctx, u, WithCredentials(creds))
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
				b.Fatal(err)
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
		})
	}
}
