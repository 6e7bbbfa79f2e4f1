package fakeglue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Proxy is an HTTP proxy in front of moto that answers as AWS Glue does
// where moto does not (see the package doc). It is safe for concurrent use.
type Proxy struct {
	// URL is the proxy's address (http://127.0.0.1:PORT): the Glue endpoint
	// a client under test is given.
	URL string

	upstream string
	srv      *http.Server
	ln       net.Listener
	client   *http.Client

	mu       sync.Mutex
	counts   map[string]int
	calls    map[string]int // first attempts (Calls)
	updates  []Update
	latency  time.Duration
	faults   map[string][]Fault
	holds    map[string][]*Hold
	tableMus map[string]*sync.Mutex
	// listings are the moto answers kept for listings' next pages (paged),
	// by id; listingOrder is their order, oldest first.
	listings     map[uint64]*listing
	listingOrder []uint64
	lastListing  uint64
}

// Update is one UpdateTable the proxy received, as sent.
type Update struct {
	Database, Table string
	// VersionID is the request's VersionId ("" when not sent).
	VersionID string
	// SkipArchive is the request's SkipArchive (nil when not sent).
	SkipArchive *bool
}

// New starts a proxy on 127.0.0.1 (a free port) in front of the moto
// server at upstream (http://127.0.0.1:PORT). Close stops it.
func New(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeglue: listen: %w", err)
	}
	p := &Proxy{
		URL:      "http://" + ln.Addr().String(),
		upstream: strings.TrimSuffix(upstream, "/"),
		ln:       ln,
		client:   &http.Client{Timeout: 60 * time.Second},
		counts:   map[string]int{},
		calls:    map[string]int{},
		faults:   map[string][]Fault{},
		holds:    map[string][]*Hold{},
		tableMus: map[string]*sync.Mutex{},
		listings: map[uint64]*listing{},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy and releases every request still held.
func (p *Proxy) Close() error {
	p.mu.Lock()
	for _, hs := range p.holds {
		for _, h := range hs {
			h.Release()
		}
	}
	p.holds = map[string][]*Hold{}
	p.mu.Unlock()
	return p.srv.Close()
}

// Count is how many requests of Glue operation op (X-Amz-Target without
// "AWSGlue.", e.g. "GetTables") the proxy received, injected faults and
// retries included.
func (p *Proxy) Count(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[op]
}

// Counts is a copy of every operation's count.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Calls is, per operation, the requests that were a call's first attempt
// (the AWS SDK's amz-sdk-request header says attempt=1, or a client sent
// none): what the client asked for, without the SDK's own retries of a
// throttled, failed or timed-out attempt. A request-count bound on
// deltasync is a bound on these.
func (p *Proxy) Calls() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.calls))
	for k, v := range p.calls {
		out[k] = v
	}
	return out
}

// ResetCounts sets every count to zero and forgets the recorded updates.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts = map[string]int{}
	p.calls = map[string]int{}
	p.updates = nil
}

// Updates are the UpdateTable requests received, in order.
func (p *Proxy) Updates() []Update {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Update(nil), p.updates...)
}

// SetLatency adds d before each request is answered (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// ServeHTTP answers one request: Glue calls (X-Amz-Target AWSGlue.*) as
// described in the package doc, anything else (moto's S3, STS) passed
// through as is.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	op, isGlue := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AWSGlue.")
	if !isGlue {
		p.forward(w, r, body)
		return
	}
	p.mu.Lock()
	p.counts[op]++
	if firstAttempt(r.Header.Get("Amz-Sdk-Request")) {
		p.calls[op]++
	}
	latency := p.latency
	fault, faulted := p.takeFault(op)
	hold := p.takeHold(op)
	p.mu.Unlock()
	if latency > 0 {
		time.Sleep(latency)
	}
	if hold != nil {
		hold.wait(r)
	}
	if faulted {
		writeError(w, fault.status(), fault.Type, fault.Message)
		return
	}
	switch op {
	case "UpdateTable":
		p.updateTable(w, r, body)
	case "GetTables":
		p.paged(w, r, body, "TableList")
	case "GetDatabases":
		p.paged(w, r, body, "DatabaseList")
	default:
		p.forward(w, r, body)
	}
}

// forward sends the request to moto and copies its answer back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	status, hdr, out, err := p.roundTrip(r, body)
	if err != nil {
		writeError(w, http.StatusBadGateway, "InternalServiceException", "fakeglue: upstream: "+err.Error())
		return
	}
	for k, vs := range hdr {
		if k == "Content-Length" || k == "Connection" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

func (p *Proxy) roundTrip(r *http.Request, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out, err
}

// call sends a Glue request of its own to moto (the proxy's GetTable
// before a guarded UpdateTable), signed like the client's.
func (p *Proxy) call(r *http.Request, op string, in any) (int, []byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return 0, nil, err
	}
	req := r.Clone(r.Context())
	req.Header.Set("X-Amz-Target", "AWSGlue."+op)
	status, _, out, err := p.roundTrip(req, b)
	return status, out, err
}

// writeError answers as an awsJson1_1 service does: the error code in the
// X-Amzn-ErrorType header and as the body's __type, with a message.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.Header().Set("X-Amzn-RequestId", "fakeglue")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"__type": code, "message": msg})
	_, _ = w.Write(b)
}

// firstAttempt reads the AWS SDK's amz-sdk-request header ("attempt=2;
// max=5"): whether the request is a call's first attempt (no header: a
// client that does not say, counted as one).
func firstAttempt(h string) bool {
	for _, part := range strings.Split(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "attempt="); ok {
			return v == "1"
		}
	}
	return true
}
