package events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltasync/deltasync/sync/location"
)

// The samples in testdata/events follow the providers' documented message
// structures: S3 event notifications (direct, in an SNS envelope, and the
// EventBridge "Object Created" form), MinIO's S3-form notification, Cloud
// Storage Pub/Sub notifications (attributes + JSON_API_V1 payload) and Azure
// Storage events in the Event Grid and CloudEvents 1.0 schemas.
func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sampleAttrs(t testing.TB, name string) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(readSample(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseNotificationSamples(t *testing.T) {
	tests := []struct {
		sample, attrs string
		want          []ObjectEvent
	}{
		{"s3-put.json", "", []ObjectEvent{{Format: "s3", Store: "s3://lake-prod", Created: true,
			Key:  "warehouse/sales/daily orders/_delta_log/00000000000000000042.json",
			Time: mustTime("2026-11-30T23:10:02.417Z")}}},
		{"s3-sns.json", "", []ObjectEvent{{Format: "s3-sns", Store: "s3://lake-prod", Created: true,
			Key:  "warehouse/sales/daily orders/_delta_log/00000000000000000042.json",
			Time: mustTime("2026-11-30T23:10:02.417Z")}}},
		{"s3-test-event.json", "", nil},
		{"eventbridge-object-created.json", "", []ObjectEvent{{Format: "eventbridge", Store: "s3://lake-prod", Created: true,
			Key:  "warehouse/sales/orders/_delta_log/00000000000000000043.json",
			Time: mustTime("2026-11-30T23:10:02Z")}}},
		{"minio-put.json", "", []ObjectEvent{{Format: "minio", Store: "s3://lake", Created: true,
			Key:  "warehouse/sales/daily orders/_delta_log/00000000000000000007.json",
			Time: mustTime("2026-11-30T23:10:02.417Z")}}},
		{"gcs-finalize.json", "gcs-finalize.attrs.json", []ObjectEvent{{Format: "gcs", Store: "gs://lake-prod", Created: true,
			Key:  "warehouse/sales/orders/_delta_log/00000000000000000044.json",
			Time: mustTime("2026-11-30T23:10:02.417889Z")}}},
		{"eventgrid-blobcreated.json", "", []ObjectEvent{{Format: "eventgrid", Store: "az://lakeprod/warehouse", Created: true,
			Key:  "sales/orders/_delta_log/00000000000000000045.json",
			Time: mustTime("2026-11-30T23:10:02.9584103Z")}}},
		{"eventgrid-adls-flush.json", "", []ObjectEvent{{Format: "eventgrid", Store: "az://lakeprod/warehouse", Created: true,
			Key:  "sales/daily orders/_delta_log/00000000000000000046.json",
			Time: mustTime("2026-11-30T23:10:03.3417214Z")}}},
		{"cloudevents-blobcreated.json", "", []ObjectEvent{{Format: "cloudevents", Store: "az://lakeprod/warehouse", Created: true,
			Key:  "sales/orders/_delta_log/00000000000000000047.json",
			Time: mustTime("2026-11-30T23:10:04.4589254Z")}}},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			var attrs map[string]string
			if tt.attrs != "" {
				attrs = sampleAttrs(t, tt.attrs)
			}
			got, err := ParseNotification(readSample(t, tt.sample), attrs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseNotification (-want +got):\n%s", diff)
			}
		})
	}
}

// A GCS notification with payloadFormat NONE has no body: the attributes
// alone name the object.
func TestParseGCSWithoutPayload(t *testing.T) {
	attrs := sampleAttrs(t, "gcs-finalize.attrs.json")
	attrs["payloadFormat"] = "NONE"
	got, err := ParseNotification(nil, attrs)
	if err != nil || len(got) != 1 || got[0].Key != attrs["objectId"] || !got[0].Created {
		t.Fatalf("got %+v, %v", got, err)
	}
	attrs["eventType"] = "OBJECT_DELETE"
	got, err = ParseNotification(nil, attrs)
	if err != nil || len(got) != 1 || got[0].Created {
		t.Fatalf("OBJECT_DELETE: got %+v, %v", got, err)
	}
}

// Event Grid delivers CloudEvents to Service Bus in binary mode too: the
// envelope in application properties, the data as the body.
func TestParseCloudEventsBinaryMode(t *testing.T) {
	var ce map[string]json.RawMessage
	if err := json.Unmarshal(readSample(t, "cloudevents-blobcreated.json"), &ce); err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{
		"cloudEvents:specversion": "1.0", "cloudEvents:type": "Microsoft.Storage.BlobCreated",
		"cloudEvents:time": "2026-11-30T23:10:04.4589254Z", "cloudEvents:source": "/subscriptions/x",
	}
	got, err := ParseNotification(ce["data"], attrs)
	if err != nil || len(got) != 1 || got[0].URL() != "az://lakeprod/warehouse/sales/orders/_delta_log/00000000000000000047.json" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestParseNotificationKeysAndKinds(t *testing.T) {
	s3 := func(name, key string) string {
		return `{"Records":[{"eventSource":"aws:s3","eventName":"` + name + `","s3":{"bucket":{"name":"b"},"object":{"key":"` + key + `"}}}]}`
	}
	tests := []struct {
		body, wantKey string
		created       bool
	}{
		{s3("ObjectCreated:Put", "a+b/c%2Bd/_delta_log/00000000000000000001.json"), "a b/c+d/_delta_log/00000000000000000001.json", true},
		{s3("ObjectCreated:CompleteMultipartUpload", "t%3D1/_delta_log/x"), "t=1/_delta_log/x", true},
		{s3("ObjectRemoved:Delete", "t/_delta_log/00000000000000000001.json"), "t/_delta_log/00000000000000000001.json", false},
		{`{"specversion":"1.0","type":"Microsoft.Storage.BlobRenamed","data":{"url":"https://acc.dfs.core.windows.net/c/t/_delta_log/_tmp","destinationUrl":"https://acc.dfs.core.windows.net/c/t/_delta_log/00000000000000000003.json"}}`,
			"t/_delta_log/00000000000000000003.json", true},
		{`{"eventType":"Microsoft.Storage.BlobCreated","subject":"x","data":{"url":"http://127.0.0.1:10000/devstoreaccount1/c/t/_delta_log/00000000000000000003.json"}}`,
			"t/_delta_log/00000000000000000003.json", true},
	}
	for _, tt := range tests {
		got, err := ParseNotification([]byte(tt.body), nil)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: got %+v, %v", tt.body, got, err)
		}
		if got[0].Key != tt.wantKey || got[0].Created != tt.created {
			t.Errorf("%s: got key %q created %v, want %q %v", tt.body, got[0].Key, got[0].Created, tt.wantKey, tt.created)
		}
	}
}

func TestParseNotificationNoObject(t *testing.T) {
	for _, body := range []string{
		`{"Type":"SubscriptionConfirmation","TopicArn":"arn:aws:sns:us-west-2:1:t","Message":"You have chosen to subscribe"}`,
		`[{"eventType":"Microsoft.EventGrid.SubscriptionValidationEvent","subject":"","data":{"validationCode":"512d38b6-c7b8-40c8-89fe-f46f9e9622b6"}}]`,
		`{"version":"0","detail-type":"AWS API Call via CloudTrail","source":"aws.s3","detail":{}}`,
	} {
		got, err := ParseNotification([]byte(body), nil)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: got %+v, %v; want no events, no error", body, got, err)
		}
	}
}

func TestParseNotificationPoison(t *testing.T) {
	for _, body := range []string{
		``, `not json`, `{"hello":"world"}`, `[1,2]`, `{"Records":[{"s3":{"bucket":{"name":""},"object":{"key":"k"}}}]}`,
		`{"Records":[{"s3":{"bucket":{"name":"b"},"object":{"key":"bad%zzescape"}}}]}`,
		`{"Type":"Notification","TopicArn":"arn:aws:sns:x","Message":"not json"}`,
		`{"specversion":"1.0","type":"Microsoft.Storage.BlobCreated","data":{"api":"PutBlob"}}`,
		`{"specversion":"1.0","type":"Microsoft.Storage.BlobCreated","data":{"url":"https://acc.blob.core.windows.net/onlycontainer"}}`,
		`{"kind":"storage#object","name":"t/_delta_log/x","bucket":"b"}`,
	} {
		_, err := ParseNotification([]byte(body), nil)
		if !errors.Is(err, ErrPoison) {
			t.Errorf("%q: err = %v, want ErrPoison", body, err)
		}
	}
	attrs := sampleAttrs(t, "gcs-finalize.attrs.json")
	attrs["objectId"] = "other/object"
	if _, err := ParseNotification(readSample(t, "gcs-finalize.json"), attrs); !errors.Is(err, ErrPoison) {
		t.Errorf("GCS payload naming another object: err = %v, want ErrPoison", err)
	}
}

func FuzzParseNotification(f *testing.F) {
	for _, name := range []string{"s3-put.json", "s3-sns.json", "s3-test-event.json", "eventbridge-object-created.json",
		"minio-put.json", "gcs-finalize.json", "eventgrid-blobcreated.json", "eventgrid-adls-flush.json", "cloudevents-blobcreated.json"} {
		f.Add(readSample(f, name), "")
	}
	f.Add(readSample(f, "gcs-finalize.json"), "lake-prod")
	f.Fuzz(func(t *testing.T, body []byte, gcsBucket string) {
		var attrs map[string]string
		if gcsBucket != "" {
			attrs = map[string]string{"eventType": "OBJECT_FINALIZE", "bucketId": gcsBucket,
				"objectId": "warehouse/sales/orders/_delta_log/00000000000000000044.json", "payloadFormat": "JSON_API_V1"}
		}
		evs, err := ParseNotification(body, attrs)
		if err != nil {
			if !errors.Is(err, ErrPoison) {
				t.Fatalf("error not ErrPoison: %v", err)
			}
			return
		}
		for _, e := range evs {
			if e.Store == "" || e.Key == "" || e.Format == "" {
				t.Fatalf("event with empty store, key or format: %+v", e)
			}
			if o, ok := logObjectOf(e); ok && location.ObjectRoot(o.Root) != o.Root {
				t.Fatalf("root %q not canonical", o.Root)
			}
		}
	})
}
