package notify

import (
	"encoding/json"
	"time"
)

// CloudEventPrefix is the prefix of the CloudEvents type of every event:
// io.deltasync.table.synced, io.deltasync.table.held, ...
const CloudEventPrefix = "io.deltasync.table."

// CloudEvent is an event in CloudEvents 1.0 structured JSON mode.
type CloudEvent struct {
	SpecVersion     string    `json:"specversion"`
	ID              string    `json:"id"`
	Source          string    `json:"source"`
	Type            string    `json:"type"`
	Subject         string    `json:"subject"`
	Time            time.Time `json:"time"`
	DataContentType string    `json:"datacontenttype"`
	Data            Event     `json:"data"`
}

// ContentTypeCloudEvents is the media type of a structured-mode CloudEvent.
const ContentTypeCloudEvents = "application/cloudevents+json; charset=utf-8"

// CloudEventOf is e as a CloudEvent; the source is the deltasync
// instance (a URI-reference: "deltasync/<instance>").
func CloudEventOf(e Event) CloudEvent {
	return CloudEvent{SpecVersion: "1.0", ID: e.ID, Source: "deltasync/" + e.Instance, Type: CloudEventPrefix + string(e.Kind),
		Subject: e.Table, Time: e.Time.UTC(), DataContentType: "application/json", Data: e}
}

// MarshalCloudEvent is e as a structured-mode CloudEvent's JSON.
func MarshalCloudEvent(e Event) ([]byte, error) {
	return json.Marshal(CloudEventOf(e))
}
