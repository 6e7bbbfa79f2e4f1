package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// ObjectEvent is one storage notification about one object, decoded from
// whichever format the store published it in.
type ObjectEvent struct {
	// Format names the notification format: s3, s3-sns, eventbridge, minio,
	// gcs, eventgrid or cloudevents.
	Format string
	// Store is the object's store in URL form without the key: s3://bucket,
	// gs://bucket, or az://account/container.
	Store string
	// Key is the object key, decoded (S3's "+" for space and %XX undone).
	Key string
	// Created is true for object-created (or renamed-to) events, false for
	// removals and other object events.
	Created bool
	// Time is when the store says the event happened (zero if it does not).
	Time time.Time
}

// URL is the object's location in URL form: Store + "/" + Key.
func (e ObjectEvent) URL() string { return e.Store + "/" + e.Key }

// ErrPoison marks a message that is not a notification in any format
// deltasync understands; it is acknowledged and counted, never retried.
var ErrPoison = errors.New("not a storage notification deltasync understands")

// ParseNotification decodes one message (its body and attributes) into the
// object events it carries. A well-formed notification that is about no
// object (the S3 test event, an Event Grid subscription validation, a GCS
// metadata update) yields no events and no error. Anything else that cannot
// be read returns an error wrapping ErrPoison.
func ParseNotification(body []byte, attrs map[string]string) ([]ObjectEvent, error) {
	if attrs["eventType"] != "" && attrs["bucketId"] != "" && attrs["objectId"] != "" {
		return parseGCS(body, attrs)
	}
	if t := ceAttr(attrs, "type"); t != "" {
		// CloudEvents in binary mode: the attributes are the envelope and
		// the body is the data.
		return parseEventGridData("cloudevents", t, ceAttr(attrs, "time"), ceAttr(attrs, "subject"), body)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, poison("empty body")
	}
	if trimmed[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, poison("JSON array: %v", err)
		}
		var out []ObjectEvent
		for i, r := range raws {
			evs, err := parseObject(r, 1)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out = append(out, evs...)
		}
		return out, nil
	}
	return parseObject(trimmed, 0)
}

// envelope has the top-level fields that tell the formats apart.
type envelope struct {
	Records []json.RawMessage `json:"Records"`
	// SNS
	Type     string `json:"Type"`
	Message  string `json:"Message"`
	TopicArn string `json:"TopicArn"`
	// S3 test event
	Event   string `json:"Event"`
	Service string `json:"Service"`
	// MinIO
	EventName string `json:"EventName"`
	// EventBridge
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Detail     json.RawMessage `json:"detail"`
	// Event Grid and CloudEvents
	EventType   string          `json:"eventType"`
	EventTime   string          `json:"eventTime"`
	Subject     string          `json:"subject"`
	Data        json.RawMessage `json:"data"`
	SpecVersion string          `json:"specversion"`
	CEType      string          `json:"type"`
	CETime      string          `json:"time"`
	// GCS JSON_API_V1 payload delivered without its attributes
	Kind   string `json:"kind"`
	Bucket any    `json:"bucket"`
	Name   string `json:"name"`
}

// parseObject decodes one JSON object; depth guards the SNS unwrapping.
func parseObject(b []byte, depth int) ([]ObjectEvent, error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, poison("%v", err)
	}
	switch {
	case env.Type == "Notification" && env.TopicArn != "" && env.Message != "":
		if depth > 1 {
			return nil, poison("SNS envelope nested too deep")
		}
		evs, err := parseObject([]byte(env.Message), depth+1)
		if err != nil {
			return nil, fmt.Errorf("SNS Message: %w", err)
		}
		for i := range evs {
			if evs[i].Format == "s3" {
				evs[i].Format = "s3-sns"
			}
		}
		return evs, nil
	case env.Type == "SubscriptionConfirmation" || env.Type == "UnsubscribeConfirmation":
		return nil, nil // SNS control message: no object
	case env.Records != nil:
		format := "s3"
		if env.EventName != "" {
			format = "minio"
		}
		return parseS3Records(format, env.Records)
	case env.Event == "s3:TestEvent":
		return nil, nil
	case env.DetailType != "" && env.Source == "aws.s3":
		return parseEventBridge(env)
	case env.SpecVersion != "":
		return parseEventGridData("cloudevents", env.CEType, env.CETime, env.Subject, env.Data)
	case env.EventType != "" && env.Data != nil:
		return parseEventGridData("eventgrid", env.EventType, env.EventTime, env.Subject, env.Data)
	case env.Kind == "storage#object":
		return nil, poison("GCS object resource without the eventType/bucketId/objectId attributes")
	}
	return nil, poison("no known notification fields (Records, detail-type, eventType, specversion, SNS Type)")
}

// s3Record is one record of an S3 (or MinIO) event notification.
type s3Record struct {
	EventSource string   `json:"eventSource"`
	EventTime   string   `json:"eventTime"`
	EventName   string   `json:"eventName"`
	S3          s3Entity `json:"s3"`
}

// s3Entity names the bucket and object of an S3 event: the "s3" field of a
// notification record and the "detail" of an EventBridge event alike.
type s3Entity struct {
	Bucket struct {
		Name string `json:"name"`
	} `json:"bucket"`
	Object struct {
		Key string `json:"key"`
	} `json:"object"`
}

func parseS3Records(format string, records []json.RawMessage) ([]ObjectEvent, error) {
	out := make([]ObjectEvent, 0, len(records))
	for i, raw := range records {
		var r s3Record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, poison("Records[%d]: %v", i, err)
		}
		if r.S3.Bucket.Name == "" || r.S3.Object.Key == "" {
			return nil, poison("Records[%d]: s3.bucket.name and s3.object.key are required", i)
		}
		// S3 and MinIO URL-encode the key the way HTML forms do: "+" is a
		// space and a literal "+" is "%2B".
		key, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			return nil, poison("Records[%d]: s3.object.key %q: %v", i, r.S3.Object.Key, err)
		}
		name := strings.TrimPrefix(r.EventName, "s3:") // MinIO prefixes "s3:"
		out = append(out, ObjectEvent{
			Format: format, Store: "s3://" + r.S3.Bucket.Name, Key: key,
			Created: strings.HasPrefix(name, "ObjectCreated:"),
			Time:    parseTime(r.EventTime),
		})
	}
	return out, nil
}

// parseEventBridge reads S3's EventBridge events ("Object Created", ...).
// Their object key is not URL-encoded.
func parseEventBridge(env envelope) ([]ObjectEvent, error) {
	var d s3Entity
	if err := json.Unmarshal(env.Detail, &d); err != nil {
		return nil, poison("EventBridge detail: %v", err)
	}
	if d.Bucket.Name == "" || d.Object.Key == "" {
		if strings.HasPrefix(env.DetailType, "Object ") {
			return nil, poison("EventBridge %q: detail.bucket.name and detail.object.key are required", env.DetailType)
		}
		return nil, nil
	}
	return []ObjectEvent{{
		Format: "eventbridge", Store: "s3://" + d.Bucket.Name, Key: d.Object.Key,
		Created: env.DetailType == "Object Created", Time: parseTime(env.CETime),
	}}, nil
}

// parseGCS reads a Cloud Storage Pub/Sub notification: the attributes say
// everything; the JSON_API_V1 payload is checked when present.
func parseGCS(body []byte, attrs map[string]string) ([]ObjectEvent, error) {
	bucket, object := attrs["bucketId"], attrs["objectId"]
	if attrs["payloadFormat"] == "JSON_API_V1" && len(bytes.TrimSpace(body)) > 0 {
		var obj struct {
			Name   string `json:"name"`
			Bucket string `json:"bucket"`
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, poison("GCS JSON_API_V1 payload: %v", err)
		}
		if obj.Name != object || obj.Bucket != bucket {
			return nil, poison("GCS payload names %s/%s but the attributes %s/%s", obj.Bucket, obj.Name, bucket, object)
		}
	}
	t := parseTime(attrs["eventTime"])
	return []ObjectEvent{{
		Format: "gcs", Store: "gs://" + bucket, Key: object,
		Created: attrs["eventType"] == "OBJECT_FINALIZE", Time: t,
	}}, nil
}

// parseEventGridData reads the data of an Azure Storage event, in the Event
// Grid or the CloudEvents 1.0 schema (they share the data object).
func parseEventGridData(format, typ, when, subject string, data []byte) ([]ObjectEvent, error) {
	if !strings.HasPrefix(typ, "Microsoft.Storage.Blob") {
		return nil, nil // another Event Grid event (subscription validation, ...)
	}
	var d struct {
		URL            string `json:"url"`
		DestinationURL string `json:"destinationUrl"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, poison("%s %s data: %v", format, typ, err)
	}
	raw := d.URL
	if typ == "Microsoft.Storage.BlobRenamed" || typ == "Microsoft.Storage.DirectoryRenamed" {
		raw = d.DestinationURL // the object that now exists
	}
	if raw == "" {
		return nil, poison("%s %s: data.url is required (subject %q)", format, typ, subject)
	}
	store, key, err := azureObject(raw)
	if err != nil {
		return nil, poison("%s %s: %v", format, typ, err)
	}
	return []ObjectEvent{{
		Format: format, Store: store, Key: key,
		Created: typ == "Microsoft.Storage.BlobCreated" || typ == "Microsoft.Storage.BlobRenamed",
		Time:    parseTime(when),
	}}, nil
}

// azureObject splits https://ACCOUNT.blob|dfs.core.windows.net/CONTAINER/KEY
// (the key percent-decoded) into az://ACCOUNT/CONTAINER and KEY. Emulators
// (Azurite) put the account first in the path: http://127.0.0.1:10000/ACCOUNT/CONTAINER/KEY.
func azureObject(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("blob url %q: not a URL", raw)
	}
	p := strings.TrimPrefix(u.Path, "/")
	account, _, _ := strings.Cut(u.Hostname(), ".")
	if h := u.Hostname(); net.ParseIP(h) != nil || h == "localhost" { // emulator: the account leads the path
		account, p, _ = strings.Cut(p, "/")
	}
	container, key, _ := strings.Cut(p, "/")
	if account == "" || container == "" || key == "" {
		return "", "", fmt.Errorf("blob url %q: want https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH", raw)
	}
	return "az://" + strings.ToLower(account) + "/" + container, key, nil
}

// ceAttr reads a CloudEvents binary-mode attribute under the prefixes the
// transports use (AMQP/Service Bus "cloudEvents:", "cloudEvents_", Kafka and
// HTTP "ce_"/"ce-").
func ceAttr(attrs map[string]string, name string) string {
	if attrs["cloudEvents:specversion"]+attrs["cloudEvents_specversion"]+attrs["ce_specversion"]+attrs["ce-specversion"] == "" {
		return ""
	}
	for _, p := range []string{"cloudEvents:", "cloudEvents_", "ce_", "ce-"} {
		if v := attrs[p+name]; v != "" {
			return v
		}
	}
	return ""
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func poison(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPoison, fmt.Sprintf(format, args...))
}
