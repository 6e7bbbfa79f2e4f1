package main

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/deltasync/deltasync/deltalog"
)

// TestAppExportsItsStorageGates: the storage gates the app gives every
// table (newReconciler) are the ones its registry exports: a table opened
// on them gives its bucket a deltasync_storage_throttled_total series,
// labelled with the bucket alone.
func TestAppExportsItsStorageGates(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("checkpoint", "a")
	a := testPlanApp(t, tc, nil)
	if a.gates == nil {
		t.Fatal("the app made no storage gates")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	tbl, err := deltalog.Open(context.Background(), "s3://lake/sales/orders?region=us-east-1&endpoint=http%3A%2F%2F127.0.0.1%3A1",
		deltalog.WithStorageGates(a.gates))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	want := `# HELP deltasync_storage_throttled_total Throttling answers the bucket's storage requests got (S3 503 SlowDown, GCS 429 or 503, Azure 503, 429 or 500 OperationTimedOut), each retried after the bucket's shared backoff or, past the retries, failed.
# TYPE deltasync_storage_throttled_total counter
deltasync_storage_throttled_total{bucket="s3://lake"} 0
`
	if err := testutil.GatherAndCompare(a.registry, strings.NewReader(want), "deltasync_storage_throttled_total"); err != nil {
		t.Error(err)
	}
}
