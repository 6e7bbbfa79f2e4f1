//go:build !nogcs

package deltalog

import (
	"errors"
	"net/http"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
)

func init() {
	storeClassifiers = append(storeClassifiers, classifyGCS)
	throttleClassifiers = append(throttleClassifiers, gcsThrottle)
}

// gcsThrottle recognises GCS's throttling answers, with their Retry-After
// if any: 429 Too Many Requests (rateLimitExceeded: the bucket's or an
// object's request rate is over its limit) and 503 Service Unavailable,
// which GCS answers while it scales a bucket up to a new request rate.
// The client does not retry them itself (gcsRetry): the bucket's gate
// backs them off for all of its tables.
func gcsThrottle(err error) (time.Duration, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || (ge.Code != http.StatusTooManyRequests && ge.Code != http.StatusServiceUnavailable) {
		return 0, false
	}
	return parseRetryAfter(ge.Header.Get("Retry-After")), true
}

const gcsCredentialHint = "set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run " +
	"`gcloud auth application-default login`, run with a workload identity, or let the catalog vend READ credentials (credentials: vended)"

// classifyGCS recognises the GCS client's errors for a missing bucket and
// refused credentials.
func classifyGCS(err error) *StoreError {
	if errors.Is(err, storage.ErrBucketNotExist) {
		return &StoreError{Kind: ErrBucketNotFound, Err: err,
			Hint: "GCS has no such bucket: check the bucket name in the table URL (gs://BUCKET/path/to/table)"}
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch ge.Code {
		case 401:
			return &StoreError{Kind: ErrAccessDenied, Err: err,
				Hint: "GCS did not accept the credentials: " + gcsCredentialHint}
		case 403:
			return &StoreError{Kind: ErrAccessDenied, Err: err,
				Hint: "GCS refused the request: the identity in use needs storage.objects.list and storage.objects.get on the bucket " +
					"(roles/storage.objectViewer), or let the catalog vend READ credentials (credentials: vended)"}
		}
	}
	if containsAny(err.Error(), "could not find default credentials") {
		return &StoreError{Kind: ErrNoCredentials, Err: err, Hint: gcsCredentialHint}
	}
	return nil
}
