package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gocloud.dev/pubsub"
	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/internal/testenv"
)

func TestEventsConfig(t *testing.T) {
	dir := t.TempDir()
	base := "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"main.*.*\"]}]\n"
	tests := []struct {
		name, yaml string
		env        map[string]string
		args       []string
		want       *eventsConfig
		wantResync time.Duration
		wantErr    string
	}{
		{name: "list", yaml: "events: [\"awssqs://sqs.us-east-2.amazonaws.com/1/q?region=us-east-2\"]\n",
			want: &eventsConfig{Subscriptions: []string{"awssqs://sqs.us-east-2.amazonaws.com/REDACTED?region=REDACTED"}}, wantResync: time.Hour},
		{name: "object", yaml: "events: {subscriptions: [\"nats://minio.lake\"], debounce: 1s, queue_size: 10, max_wait: 1m}\nresync_interval: 30m\n",
			want:       &eventsConfig{Subscriptions: []string{"nats://minio.lake"}, Debounce: duration(time.Second), QueueSize: 10, MaxWait: duration(time.Minute)},
			wantResync: 30 * time.Minute},
		{name: "flag replaces", yaml: "events: {subscriptions: [\"nats://a\"], debounce: 1s}\n", args: []string{"--events-url", "mem://x", "--events-url", "kafka://g?topic=t"},
			want: &eventsConfig{Subscriptions: []string{"mem://x", "kafka://g?topic=REDACTED"}, Debounce: duration(time.Second)}, wantResync: time.Hour},
		{name: "env", env: map[string]string{"DELTASYNC_EVENTS_URL": "mem://a,mem://b"},
			want: &eventsConfig{Subscriptions: []string{"mem://a", "mem://b"}}, wantResync: time.Hour},
		{name: "alias", yaml: "events: [\"awssnssqs://sqs.us-east-2.amazonaws.com/1/q\"]\n",
			want: &eventsConfig{Subscriptions: []string{"awssnssqs://sqs.us-east-2.amazonaws.com/REDACTED"}}, wantResync: time.Hour},
		{name: "unknown scheme", yaml: "events: [\"pulsar://x\"]\n", wantErr: "scheme pulsar:// is not in this build"},
		{name: "unknown key", yaml: "events: {subscriptions: [\"mem://x\"], debounse: 1s}\n", wantErr: "unknown field"},
		{name: "bad resync", yaml: "resync_interval: -1s\n", wantErr: "resync_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml", base+tt.yaml)
			code, out, errOut := runCLI(t, tt.env, append([]string{"check-config", "--config", path}, tt.args...)...)
			if tt.wantErr != "" {
				if code == 0 || !strings.Contains(errOut+out, tt.wantErr) {
					t.Fatalf("exit %d, want an error containing %q; got %s%s", code, tt.wantErr, out, errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got config
			if err := yaml.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if got.Events == nil || strings.Join(got.Events.Subscriptions, " ") != strings.Join(tt.want.Subscriptions, " ") ||
				got.Events.Debounce != tt.want.Debounce || got.Events.QueueSize != tt.want.QueueSize || got.Events.MaxWait != tt.want.MaxWait {
				t.Errorf("events = %+v, want %+v", got.Events, tt.want)
			}
			if time.Duration(got.ResyncInterval) != tt.wantResync {
				t.Errorf("resync_interval = %v, want %v", time.Duration(got.ResyncInterval), tt.wantResync)
			}
		})
	}
}

// TestRunWithEvents runs the daemon with a mem:// subscription: it reports
// the subscription on /metrics, handles what arrives, and stops cleanly.
func TestRunWithEvents(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	ctx0 := context.Background()
	topic, err := pubsub.OpenTopic(ctx0, "mem://deltasync-run-events")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = topic.Shutdown(ctx0) }()
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(ctx0)
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"run", "--catalog-url", tc.srv.URL(), "--include", "cat.s.*", "--listen", addr,
			"--schedule", "@every 1h", "--log-level", "error", "--events-url", "mem://deltasync-run-events"}, nil, io.Discard, io.Discard)
	}()
	base := "http://" + addr
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		for i := 0; i < 400; i++ {
			if ok() {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s", what)
	}
	waitUntil("ready", func() bool { code, _ := runGet(t, base+"/readyz"); return code == http.StatusOK })
	if err := topic.Send(ctx0, &pubsub.Message{Body: []byte("not a notification")}); err != nil {
		t.Fatal(err)
	}
	waitUntil("the poison message counted", func() bool {
		_, m := runGet(t, base+"/metrics")
		return strings.Contains(m, "deltasync_events_poison_total 1")
	})
	_, m := runGet(t, base+"/metrics")
	for _, want := range []string{`deltasync_event_subscription_up{subscription="mem://deltasync-run-events"} 1`,
		`deltasync_events_received_total{subscription="mem://deltasync-run-events"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
