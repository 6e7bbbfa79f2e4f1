package uc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Observer is told about every HTTP attempt: the API operationId (e.g.
// "loadTable"), the HTTP status (0 when no response arrived), the attempt's
// duration and its error (nil on 2xx).
type Observer func(operation string, status int, d time.Duration, err error)

// Options configures a Client. The zero value works against an
// unauthenticated server.
type Options struct {
	// HTTPClient sends requests. Nil: a client built from CAFile and
	// InsecureSkipVerify. Setting it together with either is an error.
	HTTPClient *http.Client
	// Token yields the bearer token; nil sends no Authorization header.
	Token TokenSource
	// Version goes into the User-Agent "deltasync/<Version>" ("dev" if empty).
	Version string
	// UserAgent, if set, replaces the whole User-Agent.
	UserAgent string
	// Timeout bounds each attempt (not the whole call). Default 30s.
	Timeout time.Duration
	// Retry is the retry policy (zero fields take defaults).
	Retry RetryPolicy
	// Observer, if set, is called after every attempt.
	Observer Observer
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string
	// InsecureSkipVerify turns TLS verification off. Never on by default.
	InsecureSkipVerify bool
	// IdleConnsPerHost is how many idle connections the built-in transport
	// keeps to the catalog (default 32): set it to at least the number of
	// goroutines calling the Client at once, or they keep opening new (TLS)
	// connections. Ignored with HTTPClient.
	IdleConnsPerHost int
	// MaxRPS caps the requests per second the whole Client sends (every
	// attempt counts), with bursts of up to Burst (default MaxRPS, at least
	// 1). 0: no cap. A 429 answer's Retry-After holds every request of the
	// Client, not only the one that got it.
	MaxRPS float64
	Burst  int
	// IdleTimeout gives an attempt up when it makes no progress for this
	// long: no byte of the answer (nor a step of sending the request)
	// since the last one, the wait for the first byte of the answer
	// included. An answer that keeps arriving, however slowly, has the
	// whole Timeout. Default 10s; negative: off (only Timeout applies). A
	// stalled attempt is an ErrStalled error, retried like a timeout,
	// except that a second stall in a row ends the request.
	IdleTimeout time.Duration
	// MaxListEntries bounds one listing (every page of one ListCatalogs,
	// ListSchemas or ListTables(Pages) call): at most this many entries, in
	// at most 2×MaxListEntries/50+2 pages (short pages allowed), so a server whose page tokens
	// never end is given up. Default 100,000.
	MaxListEntries int
	// MaxListPageBytes bounds the body of one listing page. Default 32 MiB.
	MaxListPageBytes int64
	// Limits are the server's storage widths that UpdateTable and
	// CreateTable check before sending (see Limits). Nil: UCLimits;
	// &Limits{}: no check.
	Limits *Limits
}

// String describes the options without revealing secrets.
func (o Options) String() string {
	tok := "none"
	if o.Token != nil {
		if s, ok := o.Token.(fmt.Stringer); ok {
			tok = s.String()
		} else {
			tok = "[REDACTED]"
		}
	}
	return fmt.Sprintf("catalog.Options{Token:%s Version:%q Timeout:%s CAFile:%q InsecureSkipVerify:%t MaxAttempts:%d MaxRPS:%v}",
		tok, o.Version, o.Timeout, o.CAFile, o.InsecureSkipVerify, o.Retry.MaxAttempts, o.MaxRPS)
}

// GoString is String (so %#v cannot leak a token either).
func (o Options) GoString() string { return o.String() }

// Client talks to one Unity Catalog server. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	hc       *http.Client
	token    TokenSource
	ua       string
	timeout  time.Duration
	idle     time.Duration // 0: no idle timeout
	retry    RetryPolicy
	observer Observer
	opts     Options
	throttle *throttle
}

// New returns a Client for baseURL, which ends in /api/2.1/unity-catalog
// (UC OSS and Databricks-hosted UC use the same paths).
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("catalog: invalid base URL %q: want http(s)://host/api/2.1/unity-catalog", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/api/2.1/unity-catalog") {
		return nil, fmt.Errorf("catalog: base URL %q must end in /api/2.1/unity-catalog", baseURL)
	}
	hc := opts.HTTPClient
	if hc != nil && (opts.CAFile != "" || opts.InsecureSkipVerify) {
		return nil, errors.New("catalog: set either HTTPClient or CAFile/InsecureSkipVerify, not both")
	}
	if hc == nil {
		if hc, err = NewHTTPClient(opts.CAFile, opts.InsecureSkipVerify); err != nil {
			return nil, err
		}
		sizeTransport(hc.Transport.(*http.Transport), opts.IdleConnsPerHost)
	}
	if opts.MaxRPS < 0 {
		return nil, fmt.Errorf("catalog: MaxRPS %v: must not be negative", opts.MaxRPS)
	}
	c := &Client{
		base: u, hc: hc, token: opts.Token, timeout: opts.Timeout,
		retry: opts.Retry.withDefaults(), observer: opts.Observer, opts: opts,
		throttle: newThrottle(opts.MaxRPS, opts.Burst),
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	switch c.idle = opts.IdleTimeout; {
	case c.idle == 0:
		c.idle = defaultIdleTimeout
	case c.idle < 0:
		c.idle = 0 // off
	}
	c.ua = opts.UserAgent
	if c.ua == "" {
		v := opts.Version
		if v == "" {
			v = "dev"
		}
		c.ua = "deltasync/" + v
	}
	return c, nil
}

// NewHTTPClient returns the HTTP client New builds from Options.CAFile and
// Options.InsecureSkipVerify: TLS 1.2+, verification on unless insecure, the
// PEM bundle in caFile trusted in addition to the system roots. Pass it as
// ClientCredentialsConfig.HTTPClient so the token endpoint trusts the same CAs.
func NewHTTPClient(caFile string, insecure bool) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // opt-in only
	sizeTransport(tr, 0)
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("catalog: CA bundle: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("catalog: CA bundle %s holds no PEM certificates", caFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{Transport: tr}, nil
}

// String describes the client without revealing the token.
func (c *Client) String() string {
	return "catalog.Client{" + c.base.String() + " " + c.opts.String() + "}"
}

// BaseURL returns the base URL the client was built with.
func (c *Client) BaseURL() string { return c.base.String() }

// maxBody bounds how much of a response is read.
const maxBody = 64 << 20

// request is one logical API call.
type request struct {
	op     string // operationId
	method string
	path   string // relative to the base, already escaped
	query  url.Values
	body   any        // marshalled once; nil for no body
	page   *pageLimit // a list page: its 2xx body is read by readPage
}

// do sends r with retries and decodes a 2xx JSON body into out (if non-nil).
// It returns the final HTTP status (0 if none).
func (c *Client) do(ctx context.Context, r request, out any) (int, error) {
	status, body, err := c.send(ctx, r)
	if err == nil && out != nil && len(bytes.TrimSpace(body)) > 0 {
		if derr := json.Unmarshal(body, out); derr != nil {
			return status, fmt.Errorf("catalog: %s: decode response: %w", r.op, derr)
		}
	}
	return status, err
}

// send sends r with retries and returns the final HTTP status (0 if none)
// and the 2xx body as read. List pages take it from here: they drop the
// columns before decoding, and decoding into a raw copy first would scan
// (validate) and copy the whole page once more.
func (c *Client) send(ctx context.Context, r request) (int, []byte, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return 0, nil, fmt.Errorf("catalog: %s: encode request: %w", r.op, err)
		}
	}
	u := *c.base
	unescaped, err := url.PathUnescape(r.path)
	if err != nil {
		return 0, nil, fmt.Errorf("catalog: %s: bad path: %w", r.op, err)
	}
	u.Path = c.base.Path + unescaped
	u.RawPath = c.base.EscapedPath() + r.path
	u.RawQuery = r.query.Encode()
	target := u.String()

	var ownPause int64 // a pause this call set, waited out by its own backoff
	stalls := 0
	var unsure error // an earlier attempt of a write that the server may have acted on
	for attempt := 1; ; attempt++ {
		if err := c.throttle.wait(ctx, c.retry.Now(), c.retry.Sleep, ownPause); err != nil {
			return 0, nil, fmt.Errorf("catalog: %s: %w", r.op, err)
		}
		status, retryAfter, respBody, err := c.attempt(ctx, r, target, payload)
		if status == http.StatusTooManyRequests && retryAfter > 0 {
			// The whole client holds back, not only this request.
			ownPause = c.throttle.pause(c.retry.Now(), min(retryAfter, c.retry.MaxRetryAfter))
		}
		if err == nil {
			return status, respBody, nil
		}
		if ctx.Err() != nil {
			return status, nil, fmt.Errorf("catalog: %s: %w", r.op, ctx.Err())
		}
		if attempt >= c.retry.MaxAttempts || !Retryable(err) {
			if unsure != nil {
				err = &resentError{err: err, earlier: unsure}
			}
			return status, nil, err
		}
		if r.method != http.MethodGet && unsure == nil && mayHaveActed(err) {
			unsure = err
		}
		// A server that stalled twice in a row is given up: a stall costs a
		// whole IdleTimeout, and one that outlasts a retry rarely clears
		// within the attempts left, while the tables behind it wait.
		if errors.Is(err, ErrStalled) {
			if stalls++; stalls >= maxStalls {
				return status, nil, err
			}
		} else {
			stalls = 0
		}
		wait := c.retry.backoff(attempt, retryAfter)
		if c.retry.OnWait != nil {
			c.retry.OnWait(r.op, attempt, wait, retryAfter, err)
		}
		if serr := c.retry.Sleep(ctx, wait); serr != nil {
			return status, nil, fmt.Errorf("catalog: %s: %w (last error: %w)", r.op, serr, err)
		}
	}
}

// maxStalls is how many consecutive stalled attempts end a request.
const maxStalls = 2

// attempt sends the request once.
func (c *Client) attempt(ctx context.Context, r request, target string, payload []byte) (status int, retryAfter time.Duration, body []byte, err error) {
	start := time.Now()
	defer func() {
		if c.observer != nil {
			c.observer(r.op, status, time.Since(start), err)
		}
	}()
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, r.method, target, rd)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("catalog: %s: %w", r.op, err)
	}
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	var tok string
	if c.token != nil {
		if tok, err = c.token.Token(ctx); err != nil {
			return 0, 0, nil, fmt.Errorf("catalog: %s: %w", r.op, err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	wctx, watch := watchIdle(actx, c.idle)
	defer watch.stop()
	req = req.WithContext(wctx)
	watchBodies(req, watch)
	resp, err := c.hc.Do(req)
	if err != nil {
		if stall := watch.stalled(); stall != nil {
			err = stall
		}
		return 0, 0, nil, fmt.Errorf("catalog: %s: %w", r.op, redactErr(err, tok))
	}
	defer resp.Body.Close()
	status = resp.StatusCode
	if watch != nil {
		resp.Body = &progressBody{resp.Body, watch}
	}
	var rerr error
	if r.page != nil && status >= 200 && status < 300 && req.Method != http.MethodHead {
		body, rerr = readPage(resp.Body, resp.ContentLength, r.page)
	} else {
		body, rerr = readBody(resp, maxBody)
	}
	if stall := watch.stalled(); rerr != nil && stall != nil {
		rerr = stall
	}
	if status >= 200 && status < 300 {
		var be *boundError
		if errors.As(rerr, &be) {
			return status, 0, nil, be // not retried: listAll names the listing
		}
		if rerr != nil {
			return status, 0, nil, fmt.Errorf("catalog: %s: read response: %w", r.op, redactErr(rerr, tok))
		}
		return status, 0, body, nil
	}
	if tok != "" { // scrub before parsing, so trimming cannot cut the token in half
		body = []byte(redactToken(string(body), tok))
	}
	apiErr := parseAPIError(status, body)
	apiErr.Operation = r.op
	return status, parseRetryAfter(resp.Header.Get("Retry-After"), c.retry.Now()), nil, apiErr
}

// readBody reads at most limit bytes of resp's body, into a buffer of the
// announced length when there is one (a list page is hundreds of KB:
// io.ReadAll would grow its buffer several times on the way).
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= limit && resp.Request != nil && resp.Request.Method != http.MethodHead {
		b := make([]byte, n)
		_, err := io.ReadFull(resp.Body, b)
		return b, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// redact removes tok, and any run of 8 or more of its characters in any
// case, from s.
func redact(s, tok string) string { return redactToken(s, tok) }

// redactErr returns err's message with tok removed, keeping err for errors.Is/As.
func redactErr(err error, tok string) error {
	return &redactedError{msg: redact(err.Error(), tok), err: err}
}

// redactedError carries a scrubbed message while still unwrapping to the
// original error (for Retryable and errors.Is).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
