package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/deltasync/deltasync/sync/notify"
)

// event is a distinct synced event of table i.
func event(i int) notify.Event {
	n := schemaNotice()
	n.Result.Table = fmt.Sprintf("main.s.t%d", i)
	e, _ := notify.FromNotice(n, "dsync-test", time.Now())
	return e
}

// rig is a Dispatcher with its own registry and an observed logger.
type rig struct {
	reg  *prometheus.Registry
	logs *observer.ObservedLogs
	d    *notify.Dispatcher
}

func newRig(t *testing.T, o notify.Options, sinks ...notify.Sink) *rig {
	t.Helper()
	reg := prometheus.NewRegistry()
	core, logs := observer.New(zap.DebugLevel)
	o.Metrics, o.Logger = notify.NewMetrics(reg), zap.New(core)
	if o.Backoff == 0 {
		o.Backoff, o.MaxBackoff = time.Millisecond, 5*time.Millisecond
	}
	r := &rig{reg: reg, logs: logs, d: notify.New(o, sinks...)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.d.Close(ctx)
	})
	return r
}

// count is the value of a deltasync_notify_* series.
func (r *rig) count(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// close drains within d and returns how long it took.
func (r *rig) close(d time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := r.d.Close(ctx)
	return time.Since(start), err
}

// receiver is a loopback HTTP sink that keeps what it is sent.
type receiver struct {
	mu     stdsync.Mutex
	bodies [][]byte
	reqs   []*http.Request
	got    chan struct{}
}

func newReceiver(t *testing.T) (*receiver, *httptest.Server) {
	rc := &receiver{got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		rc.mu.Lock()
		rc.bodies, rc.reqs = append(rc.bodies, b), append(rc.reqs, req)
		rc.mu.Unlock()
		rc.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-rc.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("receiver: fewer than %d requests", n)
		}
	}
}

// TestWebhookCloudEvent: the plain webhook gets each event as a
// CloudEvents 1.0 structured JSON POST, with the configured headers.
func TestWebhookCloudEvent(t *testing.T) {
	rc, srv := newReceiver(t)
	s, err := notify.NewWebhook(srv.URL+"/hook", "", notify.HTTPOptions{Header: http.Header{"X-Team": {"data"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, notify.Options{}, s)
	e := event(1)
	r.d.Send(e)
	rc.wait(t, 1)
	var ce map[string]any
	if err := json.Unmarshal(rc.bodies[0], &ce); err != nil {
		t.Fatal(err)
	}
	if ce["specversion"] != "1.0" || ce["id"] != e.ID || ce["type"] != "io.deltasync.table.synced" || ce["subject"] != "main.s.t1" ||
		ce["source"] != "deltasync/dsync-test" || ce["datacontenttype"] != "application/json" || ce["time"] == nil {
		t.Fatalf("CloudEvent = %v", ce)
	}
	data := ce["data"].(map[string]any)
	if data["table"] != "main.s.t1" || data["log_version"] != 3.0 || len(data["changes"].([]any)) != 1 {
		t.Fatalf("data = %v", data)
	}
	if h := rc.reqs[0].Header; h.Get("X-Team") != "data" || !strings.HasPrefix(h.Get("Content-Type"), "application/cloudevents+json") {
		t.Fatalf("headers = %v", h)
	}
}

// TestWebhookTemplate: with a template, the webhook posts what it renders
// (a Slack message).
func TestWebhookTemplate(t *testing.T) {
	rc, srv := newReceiver(t)
	s, err := notify.NewWebhook(srv.URL, `{"text": "{{.Kind}}: {{.Table}} at version {{.LogVersion}}", "reason": {{json .Reason}}}`, notify.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, notify.Options{}, s)
	r.d.Send(event(2))
	rc.wait(t, 1)
	if got := string(rc.bodies[0]); got != `{"text": "synced: main.s.t2 at version 3", "reason": ""}` {
		t.Fatalf("body = %s", got)
	}
	if _, err := notify.NewWebhook(srv.URL, `{{.Nope`, notify.HTTPOptions{}); err == nil || !strings.Contains(err.Error(), "webhook template") {
		t.Fatalf("bad template: %v", err)
	}
}

// TestOpenLineageTransport: the OpenLineage sink posts to
// {url}/api/v1/lineage with Authorization: Bearer <api key>.
func TestOpenLineageTransport(t *testing.T) {
	rc, srv := newReceiver(t)
	s, err := notify.NewOpenLineage(srv.URL+"/", "k3y-s3cret", notify.Lineage{}, notify.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, notify.Options{}, s)
	r.d.Send(event(3))
	rc.wait(t, 1)
	req := rc.reqs[0]
	if req.URL.Path != "/api/v1/lineage" || req.Header.Get("Authorization") != "Bearer k3y-s3cret" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request %s %v", req.URL.Path, req.Header)
	}
	var ev map[string]any
	if err := json.Unmarshal(rc.bodies[0], &ev); err != nil || ev["eventType"] != "COMPLETE" {
		t.Fatalf("event %v (%v)", ev, err)
	}
	if str := fmt.Sprint(s); strings.Contains(str, "k3y") {
		t.Fatalf("String() shows the key: %s", str)
	}
}

// TestRetryUntilDelivered: a sink answering 503 twice gets the event on
// the third attempt (at least once while it is reachable), each failure
// counted.
func TestRetryUntilDelivered(t *testing.T) {
	var mu stdsync.Mutex
	calls := 0
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		close(done)
	}))
	defer srv.Close()
	s, _ := notify.NewWebhook(srv.URL, "", notify.HTTPOptions{})
	r := newRig(t, notify.Options{}, s)
	r.d.Send(event(4))
	<-done
	if _, err := r.close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := r.count(t, "deltasync_notify_delivered_total", "sink", "webhook"); got != 1 {
		t.Errorf("delivered = %v, want 1", got)
	}
	if got := r.count(t, "deltasync_notify_failed_total", "sink", "webhook"); got != 2 {
		t.Errorf("failed = %v, want 2", got)
	}
}

// TestRejectedNotRetried: a 400 is permanent: dropped as rejected after
// one attempt, the error logged without the URL's token.
func TestRejectedNotRetried(t *testing.T) {
	calls := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls <- struct{}{}
		http.Error(w, "bad payload", http.StatusBadRequest)
	}))
	defer srv.Close()
	s, _ := notify.NewWebhook(srv.URL+"/services/T0/B0/t0ken-XYZ", "", notify.HTTPOptions{})
	r := newRig(t, notify.Options{}, s)
	r.d.Send(event(5))
	if _, err := r.close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 {
		t.Errorf("%d attempts, want 1", len(calls))
	}
	if got := r.count(t, "deltasync_notify_dropped_total", "sink", "webhook", "reason", "rejected"); got != 1 {
		t.Errorf("dropped{rejected} = %v, want 1", got)
	}
	assertNoSecret(t, r.logs, "t0ken-XYZ")
}

// assertNoSecret fails when any log entry (message or field) holds secret.
func assertNoSecret(t *testing.T, logs *observer.ObservedLogs, secret string) {
	t.Helper()
	if logs.Len() == 0 {
		t.Fatal("nothing logged")
	}
	for _, e := range logs.All() {
		b, _ := json.Marshal(e.ContextMap())
		if strings.Contains(e.Message+string(b), secret) {
			t.Errorf("log %q %s holds the secret", e.Message, b)
		}
	}
}

// blockingSink holds every delivery until release is closed; started
// gets one value per delivery begun.
type blockingSink struct {
	started chan notify.Event
	release chan struct{}
}

func (b *blockingSink) Name() string { return "blocking" }
func (b *blockingSink) Deliver(ctx context.Context, e notify.Event) error {
	b.started <- e
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestQueueFullDropsNotBlocks: with the sink stuck, Send never blocks;
// events past the queue's bound are dropped and counted (queue_full), and
// a repeat of the last event of a table is not queued again.
func TestQueueFullDropsNotBlocks(t *testing.T) {
	b := &blockingSink{started: make(chan notify.Event, 10), release: make(chan struct{})}
	r := newRig(t, notify.Options{QueueSize: 2, AttemptTimeout: time.Minute}, b)
	r.d.Send(event(0))
	<-b.started // in flight, held
	start := time.Now()
	for i := 1; i <= 5; i++ {
		r.d.Send(event(i))
		r.d.Send(event(i)) // the same outcome again: suppressed
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Send blocked %v on a stuck sink", d)
	}
	if got := r.count(t, "deltasync_notify_dropped_total", "sink", "blocking", "reason", "queue_full"); got != 3 {
		t.Errorf("dropped{queue_full} = %v, want 3 (5 sent, 2 queued)", got)
	}
	if got := r.count(t, "deltasync_notify_queue_depth", "sink", "blocking"); got != 2 {
		t.Errorf("queue depth = %v, want 2", got)
	}
	close(b.release)
	if _, err := r.close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := r.count(t, "deltasync_notify_delivered_total", "sink", "blocking"); got != 3 {
		t.Errorf("delivered = %v, want 3 (the one in flight and the 2 queued, drained at shutdown)", got)
	}
}

// TestShutdownDeadline: a sink that never answers holds shutdown no
// longer than its deadline; what is still queued is counted as dropped.
func TestShutdownDeadline(t *testing.T) {
	b := &blockingSink{started: make(chan notify.Event, 10), release: make(chan struct{})}
	r := newRig(t, notify.Options{QueueSize: 10, AttemptTimeout: time.Hour}, b)
	for i := range 4 {
		r.d.Send(event(i))
	}
	<-b.started
	took, err := r.close(200 * time.Millisecond)
	if err == nil || took > 2*time.Second {
		t.Fatalf("Close took %v, err %v: want the deadline's error, soon after it", took, err)
	}
	if got := r.count(t, "deltasync_notify_dropped_total", "sink", "blocking", "reason", "shutdown"); got != 4 {
		t.Errorf("dropped{shutdown} = %v, want 4", got)
	}
}

// TestHostileSinks: a sink that is slow, answers 5xx, hangs, sends a huge
// answer or resets the connection never blocks Send, costs bounded time
// per attempt and bounded memory, and is counted (failed, then dropped
// after MaxAttempts) — the daemon goes on.
func TestHostileSinks(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	for name, h := range map[string]http.HandlerFunc{
		"slow": func(_ http.ResponseWriter, req *http.Request) {
			select { // answers after the attempt's timeout
			case <-time.After(2 * time.Second):
			case <-req.Context().Done():
			}
		},
		"5xx": func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, strings.Repeat("x", 1<<20), http.StatusBadGateway)
		},
		"hang": func(w http.ResponseWriter, req *http.Request) {
			w.WriteHeader(200) // headers, then a body that never ends
			w.(http.Flusher).Flush()
			select {
			case <-hang:
			case <-req.Context().Done():
			}
		},
		"huge": func(w http.ResponseWriter, req *http.Request) {
			w.WriteHeader(500)
			chunk := make([]byte, 1<<20)
			for i := 0; i < 1024 && req.Context().Err() == nil; i++ { // up to 1 GiB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
		"reset": func(w http.ResponseWriter, _ *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_ = c.(*net.TCPConn).SetLinger(0)
			_ = c.Close()
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			s, _ := notify.NewWebhook(srv.URL, "", notify.HTTPOptions{})
			r := newRig(t, notify.Options{MaxAttempts: 2, AttemptTimeout: 300 * time.Millisecond}, s)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			r.d.Send(event(1))
			r.d.Send(event(2))
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Fatalf("Send took %v", d)
			}
			took, _ := r.close(5 * time.Second)
			if took > 4*time.Second {
				t.Fatalf("drain took %v", took)
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; name == "huge" && grew > 64<<20 {
				t.Errorf("a huge answer cost %d MiB of allocations", grew>>20)
			}
			dropped := r.count(t, "deltasync_notify_dropped_total", "sink", "webhook", "reason", "retries")
			if name == "hang" { // 200 with headers: delivered, the body left unread past the bound
				dropped = 2 - r.count(t, "deltasync_notify_delivered_total", "sink", "webhook")
				if dropped != 0 {
					t.Errorf("hang: %v not delivered", dropped)
				}
				return
			}
			if dropped != 2 {
				t.Errorf("dropped{retries} = %v, want 2", dropped)
			}
			if got := r.count(t, "deltasync_notify_failed_total", "sink", "webhook"); got != 4 {
				t.Errorf("failed = %v, want 4 (2 events x 2 attempts)", got)
			}
		})
	}
}
