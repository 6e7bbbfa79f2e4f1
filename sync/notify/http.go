package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"text/template"
	"time"
)

// errEncode wraps an event a sink cannot encode: resending will not help.
var errEncode = errors.New("cannot encode event")

// maxResponse bounds what is read of a sink's answer (the rest is
// discarded with the connection): a huge response costs no memory.
const maxResponse = 64 << 10

// HTTPOptions configure an HTTP sink.
type HTTPOptions struct {
	// Client sends the requests (default: one with no overall timeout,
	// the Dispatcher's AttemptTimeout bounding each attempt, and bounded
	// dial and response-header waits).
	Client *http.Client
	// Header is added to every request (values may be secrets: they are
	// never logged).
	Header http.Header
}

// httpSink POSTs each event, encoded by body, to url.
type httpSink struct {
	name   string
	url    string
	client *http.Client
	header http.Header
	body   func(Event) (data []byte, contentType string, err error)
}

func newHTTPSink(name, rawURL string, o HTTPOptions, body func(Event) ([]byte, string, error)) (*httpSink, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("notify: %s sink: url %s: want http(s)://host/path", name, RedactURL(rawURL))
	}
	c := o.Client
	if c == nil {
		c = defaultClient()
	}
	return &httpSink{name: name, url: rawURL, client: c, header: o.Header.Clone(), body: body}, nil
}

func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 30 * time.Second
	t.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (s *httpSink) Name() string   { return s.name }
func (s *httpSink) String() string { return s.name + " " + RedactURL(s.url) }

// Deliver POSTs e: a 2xx delivers it; 408, 429 and 5xx are retried; any
// other answer is permanent. The error names the sink and the redacted
// URL, never a header or the URL's secrets.
func (s *httpSink) Deliver(ctx context.Context, e Event) error {
	data, ct, err := s.body(e)
	if err != nil {
		return fmt.Errorf("%s: table %s: %w: %w", s.name, e.Table, errEncode, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.name, RedactURL(s.url), errEncode)
	}
	for k, vs := range s.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", ct)
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message holds the full URL
		}
		return fmt.Errorf("%s POST %s: %w", s.name, RedactURL(s.url), err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("%s POST %s: %s: %s", s.name, RedactURL(s.url), resp.Status, strings.TrimSpace(string(head)))
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return err
	}
	return Permanent(err)
}

// NewOpenLineage is a sink that sends each event to an OpenLineage HTTP
// endpoint as its HTTP transport does: POST {url}/api/v1/lineage, with
// Authorization: Bearer apiKey when apiKey is set.
func NewOpenLineage(baseURL, apiKey string, l Lineage, o HTTPOptions) (Sink, error) {
	o.Header = o.Header.Clone()
	if o.Header == nil {
		o.Header = http.Header{}
	}
	if apiKey != "" {
		o.Header.Set("Authorization", "Bearer "+apiKey)
	}
	endpoint := strings.TrimRight(baseURL, "/") + "/api/v1/lineage"
	return newHTTPSink("openlineage", endpoint, o, func(e Event) ([]byte, string, error) {
		b, err := OpenLineage(e, l)
		return b, "application/json", err
	})
}

// NewWebhook is a sink that POSTs each event to url: the CloudEvent
// (structured JSON mode), or with tmpl the text it renders from the Event
// (e.g. Slack's {"text": ...}; the template function json quotes a value
// as JSON).
func NewWebhook(rawURL, tmpl string, o HTTPOptions) (Sink, error) {
	body := func(e Event) ([]byte, string, error) {
		b, err := MarshalCloudEvent(e)
		return b, ContentTypeCloudEvents, err
	}
	if tmpl != "" {
		t, err := ParseTemplate(tmpl)
		if err != nil {
			return nil, err
		}
		body = func(e Event) ([]byte, string, error) {
			var buf bytes.Buffer
			if err := t.Execute(&buf, e); err != nil {
				return nil, "", err
			}
			return buf.Bytes(), "application/json", nil
		}
	}
	return newHTTPSink("webhook", rawURL, o, body)
}

// ParseTemplate parses a webhook template; json is a function quoting a
// value as JSON.
func ParseTemplate(text string) (*template.Template, error) {
	t, err := template.New("webhook").Option("missingkey=error").Funcs(template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("notify: webhook template: %w", err)
	}
	return t, nil
}

// RedactURL is u fit for logs: scheme, host and port only, the path, query
// and user info (where webhook tokens live) replaced by "REDACTED".
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "REDACTED"
	}
	s := p.Scheme + "://" + p.Host
	if (p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.User != nil {
		s += "/REDACTED"
	}
	return s
}
