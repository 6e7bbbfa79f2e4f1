package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/prometheus/client_golang/prometheus"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
	"gocloud.dev/pubsub"
	_ "gocloud.dev/pubsub/mempubsub"

	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/metrics"
)

// lake is an in-process S3 server (gofakes3) holding Delta tables under
// s3://lake/w/<table>, with every LIST counted per table.
type lake struct {
	t        testing.TB
	endpoint string
	query    string
	bucket   *blob.Bucket
	mu       stdsync.Mutex
	lists    map[string]int // table -> LIST requests
	reqs     map[string]int // table -> every request
}

func newLake(t testing.TB) *lake {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	l := &lake{t: t, lists: map[string]int{}, reqs: map[string]int{}}
	fake := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/lake/w/")
		if tbl, _, ok := strings.Cut(key, "/"); ok && key != r.URL.Path {
			l.mu.Lock()
			l.reqs[tbl]++
			l.mu.Unlock()
		}
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
			p := strings.TrimPrefix(r.URL.Query().Get("prefix"), "w/")
			tbl, _, _ := strings.Cut(p, "/")
			l.mu.Lock()
			l.lists[tbl]++
			l.reqs[tbl]++
			l.mu.Unlock()
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	l.endpoint = srv.URL
	l.query = "?endpoint=" + url.QueryEscape(srv.URL) + "&region=us-east-1&use_path_style=true&disable_https=true"
	b, err := blob.OpenBucket(context.Background(), "s3://lake"+l.query)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	l.bucket = b
	return l
}

// location is the table's catalog location (driver parameters in the query).
func (l *lake) location(table string) string { return "s3://lake/w/" + table + l.query }

// requestsOf counts every storage request for the table (LIST, GET, HEAD, PUT).
func (l *lake) requestsOf(table string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reqs[table]
}

func (l *lake) listsOf(table string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lists[table]
}

func (l *lake) put(key string, data []byte) {
	l.t.Helper()
	if err := l.bucket.WriteAll(context.Background(), key, data, nil); err != nil {
		l.t.Fatal(err)
	}
}

// seed copies a corpus table's log (versions <= upTo) to w/<table>.
func (l *lake) seed(src, table string, upTo int64) {
	l.t.Helper()
	dir := filepath.Join(l.t.TempDir(), table)
	copyLog(l.t, src, dir, upTo)
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		l.t.Fatal(err)
	}
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "_delta_log", en.Name()))
		if err != nil {
			l.t.Fatal(err)
		}
		l.put("w/"+table+"/_delta_log/"+en.Name(), data)
	}
}

// commit writes a data-only commit (commitInfo alone) at version v.
func (l *lake) commit(table string, v int64) string {
	key := fmt.Sprintf("w/%s/_delta_log/%020d.json", table, v)
	l.put(key, fmt.Appendf(nil, `{"commitInfo":{"timestamp":%d,"operation":"WRITE","operationParameters":{"mode":"Append"}}}`+"\n",
		time.Now().UnixMilli()))
	return key
}

// s3Event is the S3 event notification S3 sends for a PUT of key.
func s3Event(bucket, key string, at time.Time) []byte {
	enc := strings.ReplaceAll(url.QueryEscape(key), "%2F", "/")
	return fmt.Appendf(nil, `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",`+
		`"eventTime":%q,"eventName":"ObjectCreated:Put","userIdentity":{"principalId":"AWS:EXAMPLE"},`+
		`"requestParameters":{"sourceIPAddress":"127.0.0.1"},"responseElements":{"x-amz-request-id":"C3D13FE58DE4C810","x-amz-id-2":"x"},`+
		`"s3":{"s3SchemaVersion":"1.0","configurationId":"deltasync","bucket":{"name":%q,"ownerIdentity":{"principalId":"EXAMPLE"},"arn":"arn:aws:s3:::%s"},`+
		`"object":{"key":%q,"size":120,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`,
		at.UTC().Format("2006-01-02T15:04:05.000Z"), bucket, bucket, enc)
}

// eventRig is a catalog (uctest), an S3 lake, a mem:// topic and an Events
// wired to a Reconciler.
type eventRig struct {
	*env
	lake    *lake
	topic   *pubsub.Topic
	events  *events.Events
	rec     *sync.Reconciler
	reg     *prometheus.Registry
	opened  atomic.Int64
	openErr atomic.Pointer[error]
}

func newEventRig(t testing.TB, e *env, mutate func(*events.Options)) *eventRig {
	t.Helper()
	return newEventRigWith(t, e, mutate, nil)
}

// newEventRigWith is newEventRig whose reconciler's options syncMutate
// changes last (nil: none).
func newEventRigWith(t testing.TB, e *env, mutate func(*events.Options), syncMutate func(*sync.Options)) *eventRig {
	t.Helper()
	rg := &eventRig{env: e, lake: newLake(t), reg: prometheus.NewRegistry()}
	topicURL := "mem://" + strings.ReplaceAll(t.Name(), "/", "_")
	ctx := context.Background()
	topic, err := pubsub.OpenTopic(ctx, topicURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = topic.Shutdown(context.Background()) })
	rg.topic = topic
	opts := events.Options{
		Sources: []events.Source{{Name: topicURL, Open: func(ctx context.Context) (*pubsub.Subscription, func(), error) {
			if p := rg.openErr.Load(); p != nil && *p != nil {
				return nil, nil, *p
			}
			rg.opened.Add(1)
			sub, err := pubsub.OpenSubscription(ctx, topicURL+"?ackdeadline=30s")
			return sub, nil, err
		}}},
		Debounce: 20 * time.Millisecond, Concurrency: 2,
		Retry:     sync.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond},
		Reconnect: sync.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond},
		MaxWait:   5 * time.Second,
		// the daemon's default resync_interval; 0 would mean never skip
		ResyncInterval: time.Hour,
		Metrics:        events.NewMetrics(rg.reg),
	}
	if mutate != nil {
		mutate(&opts)
	}
	rg.events, err = events.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.allowLake(rg.lake)
	rg.rec = e.reconciler([]sync.Rule{{Include: []string{e.catalog + "." + e.schema + ".*"}}}, func(o *sync.Options) {
		o.Dirty = rg.events.Dirty()
		o.Metrics = metrics.New(rg.reg, "test")
		if syncMutate != nil {
			syncMutate(o)
		}
	})
	return rg
}

// table seeds and registers a table from the corpus.
func (rg *eventRig) table(src, name string, upTo int64) {
	rg.t.Helper()
	rg.lake.seed(src, name, upTo)
	tb, err := openLog(rg.lake.location(name))
	if err != nil {
		rg.t.Fatal(err)
	}
	if _, err := sync.Register(context.Background(), kindOf(rg.client), tb, rg.name(name), catalogLocation(rg.lake.location(name))); err != nil {
		rg.t.Fatalf("register %s: %v", name, err)
	}
}

// run starts the event loop; it stops at the end of the test.
func (rg *eventRig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = rg.events.Run(ctx, rg.rec)
	}()
	rg.t.Cleanup(func() { cancel(); <-done })
	rg.waitFor("subscription open", func() bool { return rg.events.Ready() == nil })
}

func (rg *eventRig) publish(body []byte) {
	rg.t.Helper()
	if err := rg.topic.Send(context.Background(), &pubsub.Message{Body: body}); err != nil {
		rg.t.Fatal(err)
	}
}

// watermark is the version the catalog records for the table.
func (rg *eventRig) watermark(name string) int64 {
	v := rg.record(name).LastCommitVersion
	if v == nil {
		return -1
	}
	return *v
}

func (rg *eventRig) waitFor(what string, ok func() bool) {
	rg.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			rg.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (rg *eventRig) counter(name string, labels ...string) float64 {
	mfs, err := rg.reg.Gather()
	if err != nil {
		rg.t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			case m.Histogram != nil:
				total += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return total
}

func TestEventsSyncACommitWithoutACycle(t *testing.T) {
	rg := newEventRig(t, uctestEnv(t), nil)
	rg.table("basic_partitioned", "t", 0)
	rg.table("basic_partitioned", "u", 0)
	if rep := rg.rec.Sync(context.Background()); rep.Failed() {
		t.Fatal(rep.Summary())
	}
	rg.run()
	key := rg.lake.commit("t", 1)
	rg.publish(s3Event("lake", key, time.Now()))
	rg.waitFor("t's watermark at 1", func() bool { return rg.watermark("t") == 1 })
	rg.waitFor("acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := rg.counter("deltasync_events_matched_total"); got != 1 {
		t.Errorf("matched = %v, want 1", got)
	}
	if got := rg.counter("deltasync_event_lag_seconds"); got != 1 {
		t.Errorf("lag observations = %v, want 1", got)
	}
	if got := rg.watermark("u"); got != 0 {
		t.Errorf("u was touched: watermark %d", got)
	}
}

// A burst of commits costs one reconcile, duplicates and out-of-order events
// change nothing, and the record ends at the newest version.
func TestEventsBurstDuplicatesAndOutOfOrder(t *testing.T) {
	rg := newEventRig(t, uctestEnv(t), func(o *events.Options) { o.Debounce = 300 * time.Millisecond })
	rg.table("basic_partitioned", "t", 0)
	rg.rec.Sync(context.Background())
	rg.run()
	var keys []string
	for v := int64(1); v <= 5; v++ {
		keys = append(keys, rg.lake.commit("t", v))
	}
	before := rg.lake.listsOf("t")
	now := time.Now()
	for _, i := range []int{4, 2, 0, 3, 1, 4, 4} { // out of order, with duplicates
		rg.publish(s3Event("lake", keys[i], now))
	}
	rg.waitFor("watermark 5", func() bool { return rg.watermark("t") == 5 })
	rg.waitFor("all acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := rg.lake.listsOf("t") - before; got != 1 {
		t.Errorf("%d LISTs of t for a burst of 7 events, want 1 (one debounced reconcile)", got)
	}
	if got := rg.counter("deltasync_event_lag_seconds"); got != 7 {
		t.Errorf("lag observations = %v, want 7", got)
	}
}

// An event that arrives before its commit file is visible is retried, not
// lost: the message stays unacknowledged until the log shows the version.
func TestEventsBeforeTheCommitIsVisible(t *testing.T) {
	rg := newEventRig(t, uctestEnv(t), nil)
	rg.table("basic_partitioned", "t", 0)
	rg.rec.Sync(context.Background())
	rg.run()
	key := fmt.Sprintf("w/t/_delta_log/%020d.json", 1)
	rg.publish(s3Event("lake", key, time.Now()))
	rg.waitFor("a first reconcile that cannot see v1", func() bool { return rg.lake.listsOf("t") >= 3 })
	if rg.counter("deltasync_events_pending_tables") != 1 {
		t.Fatal("the event was dropped before its commit was visible")
	}
	rg.lake.commit("t", 1)
	rg.waitFor("watermark 1", func() bool { return rg.watermark("t") == 1 })
	rg.waitFor("acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := rg.counter("deltasync_events_expired_total"); got != 0 {
		t.Errorf("expired = %v", got)
	}
}

// Events for objects of no selected table, for non-log objects, removals
// and unparseable messages are all acknowledged and counted.
func TestEventsUnmatchedAndPoison(t *testing.T) {
	rg := newEventRig(t, uctestEnv(t), nil)
	rg.table("basic_partitioned", "t", 0)
	rg.rec.Sync(context.Background())
	rg.run()
	rg.publish(s3Event("lake", "w/not_in_catalog/_delta_log/00000000000000000001.json", time.Now()))
	rg.publish(s3Event("lake", "w/t/part-00000-a.snappy.parquet", time.Now()))
	rg.publish(s3Event("lake", "w/t/_delta_log/00000000000000000001.crc", time.Now()))
	rg.publish(s3Event("other-bucket", "w/t/_delta_log/00000000000000000001.json", time.Now()))
	rg.publish([]byte(`{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-30T23:00:02.089Z","Bucket":"lake"}`))
	rg.publish([]byte("this is not a notification"))
	rg.publish([]byte(`{"Records":[{"s3":{}}]}`))
	rg.waitFor("7 messages handled", func() bool {
		return rg.counter("deltasync_events_received_total") == 7 &&
			rg.counter("deltasync_events_unmatched_total")+rg.counter("deltasync_events_poison_total") == 7
	})
	for reason, want := range map[string]float64{"no_table": 2, "not_delta_log": 1, "not_commit": 1, "no_object": 1} {
		if got := rg.counter("deltasync_events_unmatched_total", "reason", reason); got != want {
			t.Errorf("unmatched{reason=%s} = %v, want %v", reason, got, want)
		}
	}
	if got := rg.counter("deltasync_events_poison_total"); got != 2 {
		t.Errorf("poison = %v, want 2", got)
	}
	if got := rg.counter("deltasync_events_matched_total"); got != 0 {
		t.Errorf("matched = %v, want 0", got)
	}
}

// A subscription that cannot be opened is retried with backoff, shows on
// Ready and in metrics, and works once it can be opened.
func TestEventsSubscriptionReconnects(t *testing.T) {
	rg := newEventRig(t, uctestEnv(t), nil)
	rg.table("basic_partitioned", "t", 0)
	rg.rec.Sync(context.Background())
	down := fmt.Errorf("broker unreachable")
	rg.openErr.Store(&down)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rg.events.Run(ctx, rg.rec) }()
	defer func() { cancel(); <-done }()
	rg.waitFor("3 failed opens", func() bool { return rg.counter("deltasync_event_subscription_failures_total") >= 3 })
	if err := rg.events.Ready(); err == nil || !strings.Contains(err.Error(), "broker unreachable") {
		t.Errorf("Ready() = %v, want the open error", err)
	}
	if got := rg.counter("deltasync_event_subscription_up"); got != 0 {
		t.Errorf("up = %v while down", got)
	}
	var none error
	rg.openErr.Store(&none)
	rg.waitFor("ready", func() bool { return rg.events.Ready() == nil })
	if got := rg.counter("deltasync_event_subscription_up"); got != 1 {
		t.Errorf("up = %v after reconnect", got)
	}
	rg.publish(s3Event("lake", rg.lake.commit("t", 1), time.Now()))
	rg.waitFor("watermark 1", func() bool { return rg.watermark("t") == 1 })
}

// With events on, a cron cycle reads no log of a table without events
// until the resync interval has passed; a table with an event is read.
// With events off, every cycle LISTs every table.
func TestEventsLetCyclesSkipIdleTables(t *testing.T) {
	var clock atomic.Int64 // offset added to the real clock
	tick := func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
	rg := newEventRig(t, uctestEnv(t), func(o *events.Options) {
		o.ResyncInterval = time.Hour
		o.Now = tick
	})
	rg.table("basic_partitioned", "idle", 0)
	rg.table("basic_partitioned", "busy", 0)
	rg.run()
	ctx := context.Background()
	rg.rec.Sync(ctx) // full reads: the subscription was open before them
	idle, busy := rg.lake.listsOf("idle"), rg.lake.listsOf("busy")
	for range 3 {
		clock.Add(int64(10 * time.Minute))
		if rep := rg.rec.Sync(ctx); rep.Failed() {
			t.Fatal(rep.Summary())
		}
	}
	if got := rg.lake.listsOf("idle") - idle; got != 0 {
		t.Errorf("idle table LISTed %d times in 3 cycles with events on, want 0", got)
	}
	if got := rg.counter("deltasync_log_reads_skipped_total"); got != 6 {
		t.Errorf("skipped reads = %v, want 6", got)
	}
	rg.publish(s3Event("lake", rg.lake.commit("busy", 1), tick()))
	rg.waitFor("busy at 1", func() bool { return rg.watermark("busy") == 1 })
	if rg.lake.listsOf("busy") == busy {
		t.Error("the event did not read busy's log")
	}
	// Past the resync interval every table is read in full again.
	clock.Add(int64(time.Hour))
	idle = rg.lake.listsOf("idle")
	rg.rec.Sync(ctx)
	if got := rg.lake.listsOf("idle") - idle; got == 0 {
		t.Error("idle table not read after the resync interval")
	}

	// Events off: every cycle lists every table.
	e2 := uctestEnv(t)
	l2 := newLake(t)
	l2.seed("basic_partitioned", "x", 0)
	tb, err := openLog(l2.location("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sync.Register(ctx, kindOf(e2.client), tb, e2.name("x"), catalogLocation(l2.location("x"))); err != nil {
		t.Fatal(err)
	}
	e2.allowLake(l2)
	r2 := e2.reconciler([]sync.Rule{{Include: []string{e2.catalog + ".*.*"}}})
	for range 3 {
		r2.Sync(ctx)
	}
	if got := l2.listsOf("x"); got < 3 {
		t.Errorf("events off: %d LISTs in 3 cycles, want at least 3", got)
	}
}

// openLog loads a table's snapshot, for registering it.
func openLog(loc string) (*deltalog.Snapshot, error) {
	tb, err := deltalog.Open(context.Background(), loc)
	if err != nil {
		return nil, err
	}
	defer tb.Close()
	return tb.Load(context.Background(), deltalog.LoadOptions{})
}

// allowLake lets e's reconcilers read the lake's bucket, opened at its
// test server as the daemon's storage.buckets would open it.
func (e *env) allowLake(l *lake) {
	b, ok := bucketOptions(l.location("t"))
	if !ok {
		e.t.Fatal("lake location without driver options")
	}
	e.allowed = append(e.allowed, b.Location+"/**")
	e.buckets = append(e.buckets, b)
}
