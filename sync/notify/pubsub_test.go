package notify_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gocloud.dev/pubsub"
	_ "gocloud.dev/pubsub/awssnssqs"
	"gocloud.dev/pubsub/natspubsub"

	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync/notify"
)

// receiveCloudEvent reads one message from sub and decodes its CloudEvent.
func receiveCloudEvent(t *testing.T, sub *pubsub.Subscription) (notify.CloudEvent, *pubsub.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := sub.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	m.Ack()
	var ce notify.CloudEvent
	if err := json.Unmarshal(m.Body, &ce); err != nil {
		t.Fatalf("%v: %s", err, m.Body)
	}
	return ce, m
}

// checkCloudEvent asserts that ce is e.
func checkCloudEvent(t *testing.T, ce notify.CloudEvent, m *pubsub.Message, e notify.Event) {
	t.Helper()
	if ce.SpecVersion != "1.0" || ce.ID != e.ID || ce.Type != "io.deltasync.table.synced" || ce.Subject != e.Table ||
		ce.Data.Table != e.Table || *ce.Data.LogVersion != *e.LogVersion || len(ce.Data.Changes) != len(e.Changes) {
		t.Fatalf("CloudEvent = %+v, want event %+v", ce, e)
	}
	if m.Metadata["content-type"] != notify.ContentTypeCloudEvents {
		t.Errorf("metadata = %v", m.Metadata)
	}
}

// TestTopicNATS: events reach a real (embedded) NATS server's subject as
// CloudEvents.
func TestTopicNATS(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server did not start")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := natspubsub.OpenSubscriptionV2(nc, "deltasync.events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Shutdown(context.Background()) }()
	topic, err := natspubsub.OpenTopicV2(nc, "deltasync.events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = topic.Shutdown(context.Background()) }()
	r := newRig(t, notify.Options{}, notify.NewTopic("pubsub:nats", topic))
	e := event(7)
	r.d.Send(e)
	ce, m := receiveCloudEvent(t, sub)
	checkCloudEvent(t, ce, m, e)
}

// TestTopicSQS: events reach a real SQS queue (ElasticMQ,
// DELTASYNC_SQS_ENDPOINT) through the awssqs:// URL the daemon is
// configured with.
func TestTopicSQS(t *testing.T) {
	endpoint := testenv.Getenv(t, "DELTASYNC_SQS_ENDPOINT", testenv.External,
		"DELTASYNC_SQS_ENDPOINT is not set (eval \"$(.ci/setup-elasticmq.sh start)\")")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("x", "x", "")})
	var b [4]byte
	_, _ = rand.Read(b[:])
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("deltasync-notify-" + hex.EncodeToString(b[:]))})
	if err != nil {
		t.Fatalf("creating queue at %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
	u, _ := url.Parse(*out.QueueUrl)
	qURL := "awssqs://" + u.Host + u.Path + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	ctx := context.Background()
	topic, err := pubsub.OpenTopic(ctx, qURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = topic.Shutdown(ctx) }()
	sub, err := pubsub.OpenSubscription(ctx, qURL+"&waittime=1s")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Shutdown(ctx) }()
	r := newRig(t, notify.Options{}, notify.NewTopic("pubsub:awssqs", topic))
	e := event(8)
	r.d.Send(e)
	ce, m := receiveCloudEvent(t, sub)
	checkCloudEvent(t, ce, m, e)
}
