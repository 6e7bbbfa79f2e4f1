package sync_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gocloud.dev/pubsub"
	"gocloud.dev/pubsub/natspubsub"

	"github.com/deltasync/deltasync/sync/events"
)

// startNATS runs an embedded NATS server on port (0: any) and returns it.
func startNATS(t *testing.T, port int) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server did not start")
	}
	return s
}

// minioEvent is the notification MinIO publishes to a NATS subject for a
// PUT of key (its S3-form record plus EventName and Key at the top).
func minioEvent(bucket, key string) []byte {
	enc := url.QueryEscape(key)
	return fmt.Appendf(nil, `{"EventName":"s3:ObjectCreated:Put","Key":%q,"Records":[{"eventVersion":"2.0","eventSource":"minio:s3",`+
		`"awsRegion":"","eventTime":%q,"eventName":"s3:ObjectCreated:Put","userIdentity":{"principalId":"minioadmin"},`+
		`"requestParameters":{"principalId":"minioadmin","region":"","sourceIPAddress":"127.0.0.1"},`+
		`"responseElements":{"x-amz-request-id":"187C7E5C5D0F8CE1","x-minio-origin-endpoint":"http://127.0.0.1:9000"},`+
		`"s3":{"s3SchemaVersion":"1.0","configurationId":"Config","bucket":{"name":%q,"ownerIdentity":{"principalId":"minioadmin"},"arn":"arn:aws:s3:::%s"},`+
		`"object":{"key":%q,"size":120,"eTag":"8d3c4f5e3a1b2c9d0e7f6a5b4c3d2e1f","contentType":"application/json","sequencer":"187C7E5C5D3A4B21"}},`+
		`"source":{"host":"127.0.0.1","port":"","userAgent":"MinIO (linux; amd64) minio-go/v7.0.70"}}]}`,
		bucket+"/"+key, time.Now().UTC().Format(time.RFC3339Nano), bucket, bucket, enc)
}

// TestEventsOverNATS: MinIO-style notifications on a real (embedded) NATS
// server reach the catalog; when the broker restarts, the subscription is
// reported down, reopened with backoff, and events flow again.
func TestEventsOverNATS(t *testing.T) {
	ns := startNATS(t, 0)
	portNum := ns.Addr().(*net.TCPAddr).Port
	serverURL := ns.ClientURL()
	e := uctestEnv(t)
	const subject = "minio.lake"
	rg := newEventRig(t, e, func(o *events.Options) {
		o.Sources = []events.Source{{Name: "nats://" + subject, Open: func(context.Context) (*pubsub.Subscription, func(), error) {
			// No client-side reconnects: a broker restart closes the
			// connection, so the reconnect path under test is deltasync's.
			nc, err := nats.Connect(serverURL, nats.MaxReconnects(0))
			if err != nil {
				return nil, nil, err
			}
			sub, err := natspubsub.OpenSubscriptionV2(nc, subject, nil)
			if err != nil {
				nc.Close()
				return nil, nil, err
			}
			return sub, nc.Close, nil
		}}}
	})
	rg.table("basic_partitioned", "t", 0)
	rg.rec.Sync(context.Background())
	rg.run()

	pub, err := nats.Connect(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	send := func(key string) {
		t.Helper()
		if err := pub.Publish(subject, minioEvent("lake", key)); err != nil {
			t.Fatal(err)
		}
		if err := pub.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send(rg.lake.commit("t", 1))
	rg.waitFor("watermark 1", func() bool { return rg.watermark("t") == 1 })

	ns.Shutdown()
	ns.WaitForShutdown()
	rg.waitFor("subscription reported down", func() bool { return rg.events.Ready() != nil })
	if got := rg.counter("deltasync_event_subscription_up"); got != 0 {
		t.Errorf("up = %v with the broker down", got)
	}
	ns = startNATS(t, portNum)
	defer ns.Shutdown()
	rg.waitFor("subscription reopened", func() bool { return rg.events.Ready() == nil })
	if got := rg.counter("deltasync_event_subscription_failures_total"); got < 1 {
		t.Errorf("failures = %v after a broker restart", got)
	}
	// The publisher reconnects on its own (default client options).
	rg.waitFor("publisher reconnected", func() bool { return pub.IsConnected() })
	send(rg.lake.commit("t", 2))
	rg.waitFor("watermark 2", func() bool { return rg.watermark("t") == 2 })
}
