//go:build !nos3

package deltalog

import (
	"errors"
	"net/http"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func init() {
	storeClassifiers = append(storeClassifiers, classifyS3)
	throttleClassifiers = append(throttleClassifiers, s3Throttle)
}

// s3Throttle recognises S3's throttling answer: 503 SlowDown (S3 sends
// no other 503), with its Retry-After if any.
func s3Throttle(err error) (time.Duration, bool) {
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil {
		return 0, false
	}
	var api smithy.APIError
	slowDown := errors.As(err, &api) && api.ErrorCode() == "SlowDown"
	if re.HTTPStatusCode() != http.StatusServiceUnavailable && !slowDown {
		return 0, false
	}
	return parseRetryAfter(re.Response.Header.Get("Retry-After")), true
}

const s3CredentialHint = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE, run with an instance or pod role, " +
	"or let the catalog vend READ credentials (credentials: vended)"

// classifyS3 recognises the AWS SDK's errors for a missing bucket, refused
// or missing credentials and a missing or wrong region.
func classifyS3(err error) *StoreError {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket":
			return &StoreError{Kind: ErrBucketNotFound, Err: err,
				Hint: "S3 has no such bucket: check the bucket name in the table URL (s3://BUCKET/path/to/table)"}
		case "AccessDenied", "AllAccessDisabled", "AccountProblem":
			return &StoreError{Kind: ErrAccessDenied, Err: err,
				Hint: "S3 refused the request: the identity in use needs s3:ListBucket on the bucket and s3:GetObject on the table's _delta_log/, " +
					"or let the catalog vend READ credentials (credentials: vended)"}
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
			return &StoreError{Kind: ErrAccessDenied, Err: err,
				Hint: "S3 does not accept these credentials (unknown key, wrong secret or expired token): check them, or " + s3CredentialHint}
		case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
			return &StoreError{Kind: ErrRegion, Err: err,
				Hint: "the bucket is in another region: add ?region=<the bucket's region> to the table URL or set AWS_REGION"}
		}
	}
	msg := err.Error()
	switch {
	case containsAny(msg, "Invalid region", "region was not a valid DNS name", "an AWS region is required", "could not resolve region"):
		return &StoreError{Kind: ErrRegion, Err: err,
			Hint: "add ?region=<the bucket's region> to the table URL, or set AWS_REGION"}
	case containsAny(msg, "failed to retrieve credentials", "failed to refresh cached credentials", "no EC2 IMDS role found",
		"static credentials are empty", "get credentials:"):
		return &StoreError{Kind: ErrNoCredentials, Err: err, Hint: s3CredentialHint}
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == 403 {
		return &StoreError{Kind: ErrAccessDenied, Err: err,
			Hint: "S3 answered 403 Forbidden: the identity in use needs s3:ListBucket and s3:GetObject on the table, " +
				"or let the catalog vend READ credentials (credentials: vended)"}
	}
	return nil
}
