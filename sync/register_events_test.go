package sync_test

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"go.uber.org/zap/zaptest"
	"gocloud.dev/pubsub"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
	"github.com/deltasync/deltasync/sync/plan"
	"github.com/deltasync/deltasync/sync/register"
)

// waitWithin polls ok until it holds or the deadline passes.
func waitWithin(t *testing.T, d time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		done := ok()
		took := time.Since(start)
		if took > d {
			t.Fatalf("%s: not within %s (%s)", what, d, took)
		}
		if done {
			return took
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRegisterFromEventsDeltaRS: with S3 notifications on ElasticMQ, the
// first commit delta-rs writes under a register rule's template registers
// the table (on the real server when DELTASYNC_UC_URL is set) and in sync
// within 5 s, though no cron cycle runs after the first and discovery is
// due only every 6 h; the table's next commit reaches the catalog by its
// event too, and a redelivered first-commit event creates nothing.
func TestRegisterFromEventsDeltaRS(t *testing.T) {
	testenv.Suite(t)
	py := deltarsPython(t)
	client, queueURL, subURL := sqsQueue(t)
	e := newEnv(t)
	e.addSchema("sales")
	c := newRegisterCounter()
	rule := register.Rule{Location: "s3://lake/w/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	rg := newEventRigWith(t, e, func(o *events.Options) {
		o.Sources = []events.Source{{Name: subURL, Open: func(ctx context.Context) (*pubsub.Subscription, func(), error) {
			sub, err := pubsub.OpenSubscription(ctx, subURL)
			return sub, nil, err
		}}}
	}, func(o *sync.Options) {
		o.Selector, _ = sync.NewSelector(nil) // no tables[] rule: the register rule alone
		o.Catalog = kindOf(e.countingClient(c))
		o.Register = &register.Options{Rules: []register.Rule{rule}, Interval: 6 * time.Hour}
		o.ResyncInterval = time.Hour
		o.Logger = zaptest.NewLogger(t)
	})
	sales := e.in("sales")
	ctx := context.Background()
	w := startWriter(t, py, rg.lake.endpoint)
	// A table there before the daemon starts: the start-up cycle's
	// discovery registers it (and is then not due for 6 h).
	w.commit("create", "s3://lake/w/sales/early")
	rep := rg.rec.Sync(ctx)
	if got := outcomesOf(rep); got[sales.name("early").String()] != string(sync.OutcomeRegistered) || len(got) != 1 {
		t.Fatalf("start-up cycle: %v", got)
	}
	rg.run()
	send := func(body []byte) {
		t.Helper()
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(string(body))}); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(n string) bool {
		ok, err := e.client.TableExists(ctx, sales.name(n))
		return err == nil && ok
	}
	for _, n := range []string{"orders", "clicks"} {
		v := w.commit("create", "s3://lake/w/sales/"+n)
		if v != 0 {
			t.Fatalf("create %s: version %d", n, v)
		}
		send(s3Event("lake", fmt.Sprintf("w/sales/%s/_delta_log/%020d.json", n, v), time.Now()))
		took := waitWithin(t, 5*time.Second, n+" registered and in sync", func() bool {
			return exists(n) && sales.watermark(n) == v
		})
		t.Logf("%s registered %v after its event", n, took)
		// What the log says, exactly: nothing left to plan.
		snap, err := openLog(rg.lake.location("sales/" + n))
		if err != nil {
			t.Fatal(err)
		}
		rec := sales.record(n)
		if p := plan.Diff(sync.LogStateOf(snap, "s3://lake/w/sales/"+n), rec, plan.DiffOptions{}); !p.Empty() {
			t.Errorf("%s differs from its log: %v", n, p.Kinds())
		}
		if rec.Location != "s3://lake/w/sales/"+n || rec.Type != uc.TableTypeExternal {
			t.Errorf("%s recorded as %s at %s", n, rec.Type, rec.Location)
		}
		// registered; unchanged when a slow box let the queue redeliver
		// the message (visibility 2 s) and its reconcile found it in sync.
		if st := statusOf(rg.rec, sales.name(n).String()); st.Outcome != sync.OutcomeRegistered && st.Outcome != sync.OutcomeUnchanged || st.Status != sync.StatusSynced {
			t.Errorf("%s status %s/%s, want registered/synced", n, st.Outcome, st.Status)
		}
	}
	// In sync: a reconcile finds nothing to do and writes nothing.
	c.reset()
	res := rg.rec.Reconcile(ctx, sync.Target{Name: sales.name("orders"), Mode: sync.ModeSync})
	if res.Outcome != sync.OutcomeUnchanged || len(res.Actions) != 0 {
		t.Errorf("reconcile after the event registration: %s %v (%s)", res.Outcome, res.Actions, res.Reason)
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("the reconcile after registration wrote %v", w)
	}

	// Maintained afterwards: its next commit's event brings the catalog
	// to it; a redelivered first-commit event creates nothing.
	v := w.commit("append", "s3://lake/w/sales/orders")
	send(s3Event("lake", fmt.Sprintf("w/sales/orders/_delta_log/%020d.json", v), time.Now()))
	send(s3Event("lake", "w/sales/clicks/_delta_log/00000000000000000000.json", time.Now()))
	waitWithin(t, 5*time.Second, "orders at its second commit", func() bool { return sales.watermark("orders") == v })
	rg.waitFor("all acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := c.writes(); got["createTable"] != 0 {
		t.Errorf("after the tables were registered, events sent %v", got)
	}
	if got := rg.counter("deltasync_registrations_total", "outcome", "registered"); got != 3 {
		t.Errorf("registrations counted %v, want 3", got)
	}
}

// watermark is the version the catalog records for the table (-1: none).
func (e *env) watermark(table string) int64 {
	lt, err := e.client.LoadTable(context.Background(), e.name(table))
	if err != nil || lt.Metadata.LastCommitVersion == nil {
		return -1
	}
	return *lt.Metadata.LastCommitVersion
}

// TestRegisterEventRacesDiscovery: an event's registration and a discovery
// of the same new table run at once (uctest, many rounds): one create,
// and neither reports a conflict; the event path reports the table
// registered or recorded, the discovery registered or nothing.
func TestRegisterEventRacesDiscovery(t *testing.T) {
	e := uctestEnv(t)
	l := newLake(t)
	e.allowLake(l)
	ctx := context.Background()
	for i := range 8 {
		name := fmt.Sprintf("t%d", i)
		l.seed("delta-0.8.0", name, -1)
		c := newRegisterCounter()
		r := e.reconciler(nil, func(o *sync.Options) {
			o.Catalog = kindOf(e.countingClient(c))
			o.Register = &register.Options{Rules: []register.Rule{{Location: "s3://lake/w/" + name, Name: e.catalog + "." + e.schema + "." + name}}}
			o.Dirty = sync.NewDirty(sync.DirtyOptions{})
		})
		root := "s3://lake/w/" + name
		if n, ok := r.RegisterCandidate(root); !ok || n != e.name(name).String() {
			t.Fatalf("RegisterCandidate(%s) = %q, %v", root, n, ok)
		}
		var wg gosync.WaitGroup
		var ev sync.Result
		var evOK bool
		var rep *sync.Report
		wg.Go(func() { ev, evOK = r.RegisterAt(ctx, root) })
		wg.Go(func() { rep = r.Sync(ctx) })
		wg.Wait()
		if got := c.writes()["createTable"]; got != 1 {
			t.Fatalf("round %d: %d creates", i, got)
		}
		if !evOK || ev.Outcome != "" && ev.Outcome != sync.OutcomeRegistered {
			t.Errorf("round %d: event %v %s %s", i, evOK, ev.Outcome, ev.Reason)
		}
		for _, res := range rep.Results {
			if res.Outcome != sync.OutcomeRegistered && res.Outcome != sync.OutcomeUnchanged && res.Outcome != sync.OutcomeSynced {
				t.Errorf("round %d: discovery %s %s %s", i, res.Table, res.Outcome, res.Reason)
			}
		}
		if _, ok := r.RegisterCandidate(root); ok {
			t.Errorf("round %d: still a candidate once registered", i)
		}
	}
}

// TestRegisterEventChecks: an event's candidate gets discovery's checks:
// a name taken at another location, a missing schema, a refused log and
// the cap are flagged or wait, nothing is created; a root no template
// describes, or one holding no commit yet, is not decided.
func TestRegisterEventChecks(t *testing.T) {
	e := uctestEnv(t)
	l := newLake(t)
	e.allowLake(l)
	ctx := context.Background()
	l.seed("delta-0.8.0", "s/taken", -1)
	l.seed("delta-0.8.0", "nosuch/orders", -1)
	l.seed("deltalog-invalid-protocol-version", "s/refused", -1)
	l.seed("delta-0.8.0", "s/first", -1)
	l.seed("delta-0.8.0", "s/second", -1)
	l.put("w/s/empty/_delta_log/.keep", nil)
	other, err := openLog(l.location("s/taken"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sync.Register(ctx, kindOf(e.client), other, e.name("taken"), "s3://lake/elsewhere"); err != nil {
		t.Fatal(err)
	}
	c := newRegisterCounter()
	r := e.reconciler(nil, func(o *sync.Options) {
		o.Catalog = kindOf(e.countingClient(c))
		o.Register = &register.Options{MaxPerCycle: 1, Rules: []register.Rule{
			{Location: "s3://lake/w/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}}}
	})
	for root, want := range map[string]string{
		"s3://lake/w/s/taken":       "flagged/conflict",
		"s3://lake/w/nosuch/orders": "flagged/missing_schema",
		"s3://lake/w/s/refused":     "flagged/log",
	} {
		res, ok := r.RegisterAt(ctx, root)
		if got := string(res.Outcome) + "/" + string(res.ErrorReason); !ok || got != want {
			t.Errorf("%s: %v %s (%s), want %s", root, ok, got, res.Reason, want)
		}
	}
	if res, ok := r.RegisterAt(ctx, "s3://lake/w/s/first"); !ok || res.Outcome != sync.OutcomeRegistered {
		t.Errorf("first: %v %s %s", ok, res.Outcome, res.Reason)
	}
	if res, ok := r.RegisterAt(ctx, "s3://lake/w/s/second"); !ok || res.Outcome != sync.OutcomeWouldRegister || !strings.Contains(res.Reason, "max_per_cycle") {
		t.Errorf("second (cap 1): %v %s %s", ok, res.Outcome, res.Reason)
	}
	for _, root := range []string{"s3://lake/w/s/empty", "s3://lake/w/s", "s3://lake/other/s/t", "s3://lake/w/s/first/x"} {
		if _, ok := r.RegisterAt(ctx, root); ok {
			t.Errorf("%s: decided", root)
		}
	}
	if got := c.writes(); got["createTable"] != 1 {
		t.Errorf("wrote %v, want one createTable", got)
	}
	if st := statusOf(r, e.catalog+".s.taken"); st.Outcome != sync.OutcomeFlagged || st.ErrorReason != sync.ReasonConflict {
		t.Errorf("status of taken: %+v", st)
	}
}

// TestRegisterEventAheadOfTheLog: the event announces a commit the log does
// not show yet (v1 while only v0 is there): the table is registered at
// v0 and the event becomes the table's, held until the commit lands and
// the catalog records it; then acknowledged.
func TestRegisterEventAheadOfTheLog(t *testing.T) {
	e := uctestEnv(t)
	rg := newEventRigWith(t, e, nil, func(o *sync.Options) {
		o.Selector, _ = sync.NewSelector(nil)
		o.Register = &register.Options{Rules: []register.Rule{{Location: "s3://lake/w/{table}", Name: e.catalog + "." + e.schema + ".{table}"}}, Interval: 6 * time.Hour}
	})
	ctx := context.Background()
	rg.rec.Sync(ctx) // start-up discovery: nothing there yet
	rg.run()
	rg.lake.seed("delta-0.8.0", "late", 0)
	rg.publish(s3Event("lake", "w/late/_delta_log/00000000000000000001.json", time.Now()))
	rg.waitFor("registered at v0", func() bool { ok, _ := e.client.TableExists(ctx, e.name("late")); return ok })
	if got := rg.watermark("late"); got != 0 {
		t.Fatalf("watermark %d right after registering, want 0", got)
	}
	if got := rg.counter("deltasync_events_pending_tables"); got != 1 {
		t.Errorf("pending tables %v while v1 is not in the log, want 1", got)
	}
	rg.lake.commit("late", 1)
	rg.waitFor("watermark 1", func() bool { return rg.watermark("late") == 1 })
	rg.waitFor("acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
}
