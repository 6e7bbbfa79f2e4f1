package sync_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"gocloud.dev/pubsub"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
)

// TestHMSEventsOverSQS: storage events work with a Hive Metastore as they
// do with Unity Catalog. Two Spark-registered tables on an S3 lake are
// synced by a cycle; an S3 notification for one table's new commit,
// through a real SQS queue (ElasticMQ), brings that table's record to the
// commit without a cycle: no database or table listing, no batch read,
// one guarded alter; the other table's record is not written.
func TestHMSEventsOverSQS(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		client, queueURL, subURL := sqsQueue(t)
		lk := newLake(t)
		for _, n := range []string{"ev", "other"} {
			lk.seed("basic_partitioned", n, 0)
			e.sparkRegister(n, catalogLocation(lk.location(n)))
		}
		ev, err := events.New(events.Options{
			Sources: []events.Source{{Name: subURL, Open: func(ctx context.Context) (*pubsub.Subscription, func(), error) {
				sub, err := pubsub.OpenSubscription(ctx, subURL)
				return sub, nil, err
			}}},
			Debounce: 20 * time.Millisecond, Concurrency: 2, MaxWait: 5 * time.Second, ResyncInterval: time.Hour,
			Retry:     sync.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond},
			Reconnect: sync.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := bucketOptions(lk.location("ev"))
		pol, err := sync.NewStoragePolicy([]string{b.Location + "/**"}, []sync.BucketOptions{b})
		if err != nil {
			t.Fatal(err)
		}
		rec := e.reconciler(func(o *sync.Options) { o.Dirty = ev.Dirty(); o.Storage = pol })
		rep := rec.Sync(context.Background())
		for _, n := range []string{"ev", "other"} {
			if res := resultOf(t, rep, "hive."+e.db+"."+n); res.Outcome != sync.OutcomeSynced {
				t.Fatalf("cycle: %s %s %q", n, res.Outcome, res.Reason)
			}
		}
		otherDDL := e.stored("other").Parameters[hms.KeyDDLTime]

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = ev.Run(ctx, rec) }()
		t.Cleanup(func() { cancel(); <-done })
		waitUntil(t, "subscription open", func() bool { return ev.Ready() == nil })

		// Counted in order: the event's reconcile is done when the read
		// confirming its write has come back.
		var order []string
		e.takeCalls()
		e.mu.Lock()
		e.afterCall = func(op string) {
			e.mu.Lock()
			order = append(order, op)
			e.mu.Unlock()
		}
		e.mu.Unlock()
		confirmed := func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			for i, op := range order {
				if op == "alter_table_with_environment_context" && slices.Contains(order[i:], "get_table_req") {
					return true
				}
			}
			return false
		}
		key := lk.commit("ev", 1)
		if _, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl: aws.String(queueURL), MessageBody: aws.String(string(s3Event("lake", key, time.Now()))),
		}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "ev at version 1, confirmed", func() bool {
			got, err := e.plain.GetTable(context.Background(), e.db, "ev")
			return err == nil && got.Thrift.Parameters[hms.KeyLastUpdateVersion] == "1" && confirmed()
		})
		calls := e.takeCalls()
		if calls["get_all_databases"]+calls["get_all_tables"]+calls["get_table_objects_by_name_req"] != 0 {
			t.Errorf("the event ran a listing: calls %v", calls)
		}
		// One alter: the event's reconcile reads the record afresh, not
		// the cycle's listing of it (stale: the cycle wrote since), which
		// would cost a failed guard and a second alter on HMS 4.
		if calls["alter_table_with_environment_context"] != 1 {
			e.mu.Lock()
			t.Errorf("calls %v (in order %v): want one alter (ev's)", calls, order)
			e.mu.Unlock()
		}
		if got := e.stored("other").Parameters[hms.KeyDDLTime]; got != otherDDL {
			t.Errorf("other was written (transient_lastDdlTime %s → %s)", otherDDL, got)
		}
	})
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
