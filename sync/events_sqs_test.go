package sync_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"gocloud.dev/pubsub"
	_ "gocloud.dev/pubsub/awssnssqs"

	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync/events"
)

// sqsQueue creates a fresh queue on the SQS-compatible server named by
// DELTASYNC_SQS_ENDPOINT (ElasticMQ, started by .ci/setup-elasticmq.sh).
// It returns a client to send with, the queue URL and the gocloud
// subscription URL the daemon would be configured with.
func sqsQueue(t *testing.T) (*sqs.Client, string, string) {
	t.Helper()
	endpoint := testenv.Getenv(t, "DELTASYNC_SQS_ENDPOINT", testenv.External,
		"DELTASYNC_SQS_ENDPOINT is not set (eval \"$(.ci/setup-elasticmq.sh start)\")")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	client := sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("x", "x", ""),
	})
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "deltasync-" + hex.EncodeToString(b[:])
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName:  aws.String(name),
		Attributes: map[string]string{"VisibilityTimeout": "2"},
	})
	if err != nil {
		t.Fatalf("creating queue at %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
	u, err := url.Parse(*out.QueueUrl)
	if err != nil {
		t.Fatal(err)
	}
	subURL := "awssqs://" + u.Host + u.Path + "?region=us-east-1&waittime=1s&endpoint=" + url.QueryEscape(endpoint)
	return client, *out.QueueUrl, subURL
}

// snsEnvelope wraps an S3 notification the way SNS delivers it to an SQS
// queue without raw message delivery.
func snsEnvelope(t *testing.T, inner []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"Type": "Notification", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
		"TopicArn": "arn:aws:sns:us-east-1:123456789012:lake-delta-log", "Subject": "Amazon S3 Notification",
		"Message": string(inner), "Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"SignatureVersion": "1", "Signature": "EXAMPLE",
		"SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-EXAMPLE.pem",
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=EXAMPLE",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eventBridgeObjectCreated is S3's EventBridge event for a PUT of key, as an
// EventBridge rule delivers it to an SQS target.
func eventBridgeObjectCreated(bucket, key string) []byte {
	return fmt.Appendf(nil, `{"version":"0","id":"17793124-05d4-b198-2fde-7ededc63b103","detail-type":"Object Created",`+
		`"source":"aws.s3","account":"111122223333","time":%q,"region":"us-east-1","resources":["arn:aws:s3:::%s"],`+
		`"detail":{"version":"0","bucket":{"name":%q},"object":{"key":%q,"size":120,"etag":"b1946ac92492d2347c6235b4d2611184",`+
		`"sequencer":"00617F08299329D189"},"request-id":"N4N7GDK58NMKJ12R","requester":"123456789012","source-ip-address":"127.0.0.1","reason":"PutObject"}}`,
		time.Now().UTC().Format(time.RFC3339), bucket, bucket, key)
}

// TestEventsOverSQS drives ElasticMQ through gocloud's awssnssqs driver:
// S3 notifications sent directly, through SNS and through EventBridge all
// reach the catalog, and an event whose commit is not visible yet is
// returned to the queue (nack), redelivered and not lost.
func TestEventsOverSQS(t *testing.T) {
	client, queueURL, subURL := sqsQueue(t)
	rg := newEventRig(t, uctestEnv(t), func(o *events.Options) {
		o.MaxWait = 300 * time.Millisecond
		o.Sources = []events.Source{{Name: subURL, Open: func(ctx context.Context) (*pubsub.Subscription, func(), error) {
			sub, err := pubsub.OpenSubscription(ctx, subURL)
			return sub, nil, err
		}}}
	})
	for _, n := range []string{"direct", "sns", "eb", "late"} {
		rg.table("basic_partitioned", n, 0)
	}
	rg.rec.Sync(context.Background())
	rg.run()
	send := func(body []byte) {
		t.Helper()
		if _, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl: aws.String(queueURL), MessageBody: aws.String(string(body)),
		}); err != nil {
			t.Fatal(err)
		}
	}
	send(s3Event("lake", rg.lake.commit("direct", 1), time.Now()))
	send(snsEnvelope(t, s3Event("lake", rg.lake.commit("sns", 1), time.Now())))
	send(eventBridgeObjectCreated("lake", rg.lake.commit("eb", 1)))
	for _, n := range []string{"direct", "sns", "eb"} {
		rg.waitFor(n+" at version 1", func() bool { return rg.watermark(n) == 1 })
	}

	// The event arrives first; the commit lands after deltasync has given
	// up waiting once and returned the message to the queue.
	send(s3Event("lake", "w/late/_delta_log/"+strings.Repeat("0", 19)+"1.json", time.Now()))
	rg.waitFor("the message returned to the queue", func() bool { return rg.counter("deltasync_events_expired_total") >= 1 })
	rg.lake.commit("late", 1)
	rg.waitFor("late at version 1 after redelivery", func() bool { return rg.watermark("late") == 1 })
	rg.waitFor("acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := rg.counter("deltasync_events_poison_total"); got != 0 {
		t.Errorf("poison = %v", got)
	}
}
