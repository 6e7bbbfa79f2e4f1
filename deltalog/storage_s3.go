//go:build !nos3

package deltalog

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
)

// s3Enabled reports whether this build includes the s3:// driver.
const s3Enabled = true

// openS3 opens the bucket of an s3:// URL, with the URL parameters the
// gocloud opener takes. Without vended credentials the process's ambient
// AWS credentials apply; with them the client signs with those. The SDK's
// own log lines (for example "WARN falling back to IMDSv1") are silenced:
// written straight to stderr they broke its one log format, and what they
// warn of reaches the caller as the request's error.
func openS3(ctx context.Context, u *url.URL, c Credentials) (*blob.Bucket, error) {
	vended := c.S3AccessKeyID != "" || c.S3SecretAccessKey != ""
	q := u.Query()
	var clientOpts []func(*s3.Options)
	for _, key := range []string{"use_path_style", "s3ForcePathStyle", "disable_https", "accelerate"} {
		v := q.Get(key)
		if v == "" {
			continue
		}
		q.Del(key)
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for %s", v, key)
		}
		switch key {
		case "use_path_style", "s3ForcePathStyle":
			clientOpts = append(clientOpts, func(o *s3.Options) { o.UsePathStyle = on })
		case "disable_https":
			clientOpts = append(clientOpts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = on })
		case "accelerate":
			clientOpts = append(clientOpts, func(o *s3.Options) { o.UseAccelerate = on })
		}
	}
	for _, key := range []string{"ssetype", "kmskeyid", "anonymous", "profile", "role"} {
		if vended && q.Has(key) {
			return nil, fmt.Errorf("s3 URL parameter %q cannot be combined with vended credentials", key)
		}
	}
	// Server-side encryption applies to writes only; deltasync only reads.
	q.Del("ssetype")
	q.Del("kmskeyid")
	clientOpts = append(clientOpts, readOnlyChecksums)
	// Every table of a fleet shares the client of its URL parameters (the
	// bucket is not part of a client): one configuration load, one
	// credential chain and one connection pool for all of them.
	key := u.Query().Encode() // sorted: equal parameters, equal key
	var client *s3.Client
	if vended {
		cfg, err := s3Configs.get(key, func() (aws.Config, error) { return s3Config(ctx, q, false) })
		if err != nil {
			return nil, err
		}
		// A client of its own for the table's credentials, on the shared
		// configuration and transport.
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			c.S3AccessKeyID, c.S3SecretAccessKey, c.S3SessionToken))
		client = s3.NewFromConfig(cfg, clientOpts...)
	} else {
		var err error
		client, err = s3Clients.get(key, func() (*s3.Client, error) {
			cfg, err := s3Config(ctx, q, true)
			if err != nil {
				return nil, err
			}
			return s3.NewFromConfig(cfg, clientOpts...), nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s3blob.OpenBucket(ctx, client, u.Host, &s3blob.Options{
		RequestChecksumCalculation: client.Options().RequestChecksumCalculation,
	})
}

// s3Configs and s3Clients are the shared S3 configurations (for vended
// credentials) and clients (ambient credentials), by URL parameters.
// Opening a client per table cost 0.4 ms and 6 KiB kept per table, 11 ms
// and 240 KiB with AWS_CA_BUNDLE set (the bundle is parsed into a pool of
// its own per configuration), and gave every table a connection pool of
// its own: at 50,000 tables, tens of thousands of idle connections
// (TestS3TablesShareClient).
var (
	s3Configs sharedClients[aws.Config]
	s3Clients sharedClients[*s3.Client]
)

// s3Config loads the configuration the URL parameters q describe, with
// the ambient credential chain when ambient is set. Its transport keeps
// enough idle connections for the concurrent GETs of a Load.
func s3Config(ctx context.Context, q url.Values, ambient bool) (aws.Config, error) {
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return aws.Config{}, err
	}
	cfg.Logger = logging.Nop{}
	if ambient && !q.Has("anonymous") && !q.Has("role") {
		// The ambient chain gocloud built logs to stderr; resolve the same
		// chain (environment, shared files and profile, web identity,
		// container and instance roles) with the SDK's logging off.
		opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{}), config.WithRegion(cfg.Region)}
		if p := q.Get("profile"); p != "" {
			opts = append(opts, config.WithSharedConfigProfile(p))
		}
		quiet, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return aws.Config{}, err
		}
		cfg.Credentials = quiet.Credentials
	}
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		cfg.HTTPClient = bc.WithTransportOptions(keepFetchConns)
	}
	cfg.Retryer = s3Retryer(cfg.Retryer)
	return cfg, nil
}

// s3Retryer is the retryer gocloud configured (the SDK's standard one,
// with no retry quota unless the URL sets rate_limiter_capacity) except
// that it does not retry throttling: S3's 503 SlowDown is backed off per
// bucket instead, shared by that bucket's tables (bucketGate). The SDK's
// per-request retries of it (3 attempts, each request on its own) only
// added to the load on the throttled bucket, and a burst still failed the
// Loads that met it (TestS3SlowDownSparesOtherBuckets).
func s3Retryer(base func() aws.Retryer) func() aws.Retryer {
	return func() aws.Retryer {
		var r aws.Retryer
		if base != nil {
			r = base()
		} else {
			r = retry.NewStandard()
		}
		v2, ok := r.(aws.RetryerV2)
		if !ok {
			return r
		}
		return noThrottleRetry{v2}
	}
}

// noThrottleRetry is a retryer that leaves throttling to bucketGate.
type noThrottleRetry struct{ aws.RetryerV2 }

func (r noThrottleRetry) IsErrorRetryable(err error) bool {
	if _, ok := s3Throttle(err); ok {
		return false
	}
	return r.RetryerV2.IsErrorRetryable(err)
}

// readOnlyChecksums turns off the SDK's optional flexible checksums
// (its default since 2025 is "when supported"); they stay on where an
// operation requires them. deltasync only sends GET and LIST requests,
// which have no body, so the request side changes nothing but the
// middleware it skips. On the response side the default asks S3 for the
// object's full-object checksum on every GET (x-amz-checksum-mode) and
// CRCs each body as it is read: a few percent of the CPU of a Load, which
// is ~100 small GETs. What that check adds is small for deltasync: over
// HTTPS (every S3 endpoint unless disable_https) TLS already
// authenticates every byte between S3 and the process, S3 checks its own
// stored checksums, ranged GETs (Parquet checkpoints) never had a
// full-object checksum to check, and commits written without one
// (older writers) were never checked either. A commit corrupted at rest
// anyway still fails JSON parsing with an error naming the file in most
// cases. Over plain HTTP to a local store only TCP's checksum remains.
func readOnlyChecksums(o *s3.Options) {
	o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
}

// hintS3 sets StartAfter on an S3 ListObjectsV2 request.
func hintS3(as func(any) bool, full func(string) (string, bool)) bool {
	var in *s3.ListObjectsV2Input
	if !as(&in) || in == nil {
		return false
	}
	if k, ok := full(aws.ToString(in.Prefix)); ok {
		in.StartAfter = aws.String(k)
	}
	return true
}
