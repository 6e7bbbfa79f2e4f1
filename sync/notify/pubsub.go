package notify

import (
	"context"
	"fmt"

	"gocloud.dev/pubsub"
)

// topicSink sends each event as a CloudEvent (structured JSON mode) to a
// gocloud.dev/pubsub topic: SQS/SNS, Google Pub/Sub, Azure Service Bus,
// Kafka, NATS, RabbitMQ.
type topicSink struct {
	name  string
	topic *pubsub.Topic
}

// NewTopic is a sink that sends to topic; name labels it (e.g.
// "pubsub:sqs"; no secrets). The caller shuts the topic down after the
// Dispatcher is closed.
func NewTopic(name string, topic *pubsub.Topic) Sink {
	return &topicSink{name: name, topic: topic}
}

func (s *topicSink) Name() string { return s.name }

func (s *topicSink) Deliver(ctx context.Context, e Event) error {
	b, err := MarshalCloudEvent(e)
	if err != nil {
		return fmt.Errorf("%s: table %s: %w: %w", s.name, e.Table, errEncode, err)
	}
	err = s.topic.Send(ctx, &pubsub.Message{Body: b, Metadata: map[string]string{
		"content-type": ContentTypeCloudEvents, "ce_id": e.ID, "ce_type": CloudEventPrefix + string(e.Kind)}})
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}
