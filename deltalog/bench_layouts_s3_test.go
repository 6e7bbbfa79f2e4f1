package deltalog

import (
	"context"
	"testing"
)

// BenchmarkLoadLayoutsS3 is BenchmarkLoadLayouts through s3blob against an
// gofakes3 server on loopback (issue #9's "over S3" target: the 1M tables
// in at most 3x their local time). The server runs in-process unless
// DELTASYNC_BENCH_S3_SERVER=process; DELTASYNC_BENCH_S3_LATENCY delays its
// reads (bench_s3_test.go).
//
//	go test ./deltalog -run '^$' -bench BenchmarkLoadLayoutsS3 -benchmem -count 5
func BenchmarkLoadLayoutsS3(b *testing.B) {
	if !s3Enabled {
		b.Skip("built with tag nos3")
	}
	ctx := context.Background()
	for _, tc := range layoutBenchTables(b) {
		b.Run(tc[0], func(b *testing.B) {
			tbl, serverCPU := openS3BenchTable(b, tc[1])
			if _, err := tbl.Load(ctx, LoadOptions{}); err != nil {
				b.Fatal(err)
			}
			timeS3Loads(b, ctx, tbl, serverCPU)
		})
	}
}
