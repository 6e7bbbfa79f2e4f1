package glue

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	sdkglue "github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/smithy-go/middleware"
)

// Config says which Glue Data Catalog to talk to and how.
type Config struct {
	// Region is the AWS region (required: Glue has no global endpoint).
	Region string
	// CatalogID is the account id owning the catalog ("" = the caller's
	// account). Sent as CatalogId on every call.
	CatalogID string
	// Endpoint overrides the Glue endpoint (BaseEndpoint), e.g. a VPC
	// endpoint or a test server; "" = the SDK's resolution.
	Endpoint string
	// ArchiveVersions makes UpdateTable archive the previous version of the
	// record (Glue's default). false, the zero value, sends SkipArchive=true:
	// a sync that writes often would otherwise use up the 100,000 versions a
	// table may have (ResourceNumberLimitExceededException).
	ArchiveVersions bool
	// RetryMaxAttempts bounds the attempts of one call (0: DefaultRetryMaxAttempts).
	RetryMaxAttempts int
	// Timeout bounds one attempt of a call, answer included (0: none but
	// the caller's context).
	Timeout time.Duration
	// Credentials replaces the default credential chain when set (tests).
	Credentials aws.CredentialsProvider
	// Observer, when set, is called after every request sent to Glue — each
	// attempt, so a call the SDK retried after throttling is seen once per
	// attempt — with the operation (GetTables, UpdateTable, ...), its
	// duration and its error: nil on success, else the SDK's typed error
	// classified as the calls' errors are (errors.Is finds ErrConflict,
	// ErrNotFound, ErrRefused, ErrAlreadyExists and so the catalog root's
	// classes; errors.As still finds the SDK's error): the seam for metrics.
	Observer func(op string, d time.Duration, err error)
}

// DefaultRetryMaxAttempts is the attempts of one call when Config leaves
// it 0: the SDK's 3, plus two for Glue's per-account, per-region throttling.
const DefaultRetryMaxAttempts = 5

// SkipArchive is what UpdateTable sends as SkipArchive.
func (c Config) SkipArchive() bool { return !c.ArchiveVersions }

// Client is a Glue Data Catalog client: one per account and region, safe
// for concurrent use. Every call of every goroutine goes through its one
// SDK client and so its one retryer (see New).
type Client struct {
	cfg Config
	api *sdkglue.Client
}

// New builds a Client from the SDK's default credential chain
// (config.LoadDefaultConfig: env, shared files, web identity, ECS/EC2 role)
// and cfg. Its retryer is the SDK's adaptive mode: the standard retryer
// (exponential backoff with jitter on ThrottlingException, 5xx and
// connection errors; never on ConcurrentModificationException) plus a
// client-side token bucket that, once Glue throttles, slows every later
// call of this Client. Glue's rate limit is per account and region, so the
// bucket is shared by everything that calls that account and region, which
// is why there is one Client per account and region.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(cfg.Region)}
	if cfg.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(cfg.Credentials))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("glue: loading the AWS config: %w", err)
	}
	attempts := cfg.RetryMaxAttempts
	if attempts <= 0 {
		attempts = DefaultRetryMaxAttempts
	}
	api := sdkglue.NewFromConfig(awsCfg, func(o *sdkglue.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		if cfg.Observer != nil {
			o.APIOptions = append(o.APIOptions, observe(cfg.Observer))
		}
		if cfg.Timeout > 0 {
			o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(cfg.Timeout)
		}
		o.Retryer = retry.NewAdaptiveMode(func(ao *retry.AdaptiveModeOptions) {
			ao.StandardOptions = append(ao.StandardOptions, func(so *retry.StandardOptions) {
				so.MaxAttempts = attempts
			})
		})
	})
	return &Client{cfg: cfg, api: api}, nil
}

// observe adds a middleware to the Deserialize step, which runs once per
// attempt (the retryer is in the Finalize step, around it), placed first
// so it sees the deserialized, typed error.
func observe(fn func(op string, d time.Duration, err error)) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("deltasync.glue.observe",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				start := time.Now()
				out, md, err := next.HandleDeserialize(ctx, in)
				fn(middleware.GetOperationName(ctx), time.Since(start), classify(err))
				return out, md, err
			}), middleware.Before)
	}
}

// Config is the configuration the Client was built with.
func (c *Client) Config() Config { return c.cfg }

// API is the SDK client, for calls this package does not wrap.
func (c *Client) API() *sdkglue.Client { return c.api }

var (
	regionRE    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	catalogIDRE = regexp.MustCompile(`^[0-9]{12}$`)
)

func (c Config) validate() error {
	switch {
	case c.Region == "":
		return fmt.Errorf("glue: region: missing (glue://REGION or ?region=)")
	case !regionRE.MatchString(c.Region):
		return fmt.Errorf("glue: region %q: want an AWS region such as eu-west-1", c.Region)
	case c.CatalogID != "" && !catalogIDRE.MatchString(c.CatalogID):
		return fmt.Errorf("glue: catalog_id %q: want a 12-digit AWS account id", c.CatalogID)
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("glue: endpoint %q: want an http(s) URL", c.Endpoint)
		}
	}
	return nil
}

// ParseURL reads a catalog URL of the Glue kind:
//
//	glue://REGION[?catalog_id=ACCOUNT][&endpoint=URL][&archive=true][&max_attempts=N]
//	glue://?region=REGION[&…]
//
// The region is the host or the region parameter (both: they must agree).
// Unknown parameters are errors, as are bad values; each error names the
// field.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("glue: catalog URL %q: %w", raw, err)
	}
	if u.Scheme != "glue" {
		return Config{}, fmt.Errorf("glue: catalog URL %q: scheme %q, want glue://", raw, u.Scheme)
	}
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return Config{}, fmt.Errorf("glue: catalog URL %q: want glue://REGION?… with no user, port, path or fragment", raw)
	}
	cfg := Config{Region: u.Hostname()}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Config{}, fmt.Errorf("glue: catalog URL %q: query: %w", raw, err)
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return Config{}, fmt.Errorf("glue: catalog URL %q: parameter %s given %d times", raw, k, len(vs))
		}
		v := vs[0]
		switch k {
		case "region":
			if cfg.Region != "" && cfg.Region != v {
				return Config{}, fmt.Errorf("glue: catalog URL %q: region: host %q and parameter %q differ", raw, cfg.Region, v)
			}
			cfg.Region = v
		case "catalog_id":
			cfg.CatalogID = v
		case "endpoint":
			cfg.Endpoint = v
		case "archive":
			if cfg.ArchiveVersions, err = strconv.ParseBool(v); err != nil {
				return Config{}, fmt.Errorf("glue: catalog URL %q: archive %q: want true or false", raw, v)
			}
		case "max_attempts":
			if cfg.RetryMaxAttempts, err = strconv.Atoi(v); err != nil || cfg.RetryMaxAttempts < 1 {
				return Config{}, fmt.Errorf("glue: catalog URL %q: max_attempts %q: want a positive integer", raw, v)
			}
		default:
			return Config{}, fmt.Errorf("glue: catalog URL %q: unknown parameter %q (known: region, catalog_id, endpoint, archive, max_attempts)", raw, k)
		}
	}
	if err := cfg.validate(); err != nil {
		return Config{}, fmt.Errorf("glue: catalog URL %q: %s", raw, strings.TrimPrefix(err.Error(), "glue: "))
	}
	return cfg, nil
}
