package fakehms

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// HoldProxy is a TCP proxy in front of a metastore (real or fake) that
// reads each call a client sends — unframed binary Thrift, the message
// header then the arguments struct, read whole with thrift's own Skip — and
// recognises it by the method name in the header. A call a Hold is armed
// for is kept from the server until the test releases it; every other call,
// and every reply, passes through unchanged. A Thrift connection carries
// one call at a time, so holding one call holds only its own connection:
// another client (or another connection of the same one) goes on.
type HoldProxy struct {
	// URL is thrift://127.0.0.1:PORT, the proxy's address.
	URL      string
	upstream string

	mu    gosync.Mutex
	holds []*Hold
	calls []string // every call's method name, in arrival order
	conns []net.Conn
}

// Hold is one armed hold: the next call of Method (from any connection
// of the proxy) is held until Release.
type Hold struct {
	Method  string
	reached chan struct{}
	release chan struct{}
	once    gosync.Once
}

// NewHoldProxy starts a proxy for the metastore at upstream
// (thrift://host:port), stopped when t ends (every hold released).
func NewHoldProxy(t testing.TB, upstream string) *HoldProxy {
	t.Helper()
	up := strings.TrimPrefix(upstream, "thrift://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &HoldProxy{URL: "thrift://" + ln.Addr().String(), upstream: up}
	var wg gosync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, h := range p.holds {
			h.Release()
		}
		p.holds = nil
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			wg.Go(func() { p.serve(c) })
		}
	})
	return p
}

// Hold arms a hold on the next call of method (e.g.
// "alter_table_with_environment_context").
func (p *HoldProxy) Hold(method string) *Hold {
	h := &Hold{Method: method, reached: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.holds = append(p.holds, h)
	p.mu.Unlock()
	return h
}

// Calls returns the method names of the calls seen so far, in order.
func (p *HoldProxy) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

// Reached is closed once the call has arrived and is being held.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Wait waits until the call is held, failing t after a minute.
func (h *Hold) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-h.reached:
	case <-time.After(time.Minute):
		t.Fatalf("no %s call arrived at the proxy within a minute", h.Method)
	}
}

// Release lets the held call (or, if it has not arrived yet, the next
// one) go on to the server.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// take returns the armed hold for method, disarming it (nil if none).
func (p *HoldProxy) take(method string) *Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, method)
	for i, h := range p.holds {
		if h.Method == method {
			p.holds = append(p.holds[:i], p.holds[i+1:]...)
			return h
		}
	}
	return nil
}

func (p *HoldProxy) serve(client net.Conn) {
	defer func() { _ = client.Close() }()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer func() { _ = server.Close() }()
	go func() {
		_, _ = io.Copy(client, server)
		_ = client.Close()
	}()
	rec := &recorder{r: bufio.NewReader(client)}
	prot := thrift.NewTBinaryProtocolConf(rawTransport{rec}, &thrift.TConfiguration{MaxMessageSize: 64 << 20})
	ctx := context.Background()
	for {
		rec.buf.Reset()
		name, _, _, err := prot.ReadMessageBegin(ctx)
		if err != nil {
			return
		}
		if err := prot.Skip(ctx, thrift.STRUCT); err != nil {
			return
		}
		if err := prot.ReadMessageEnd(ctx); err != nil {
			return
		}
		if h := p.take(name); h != nil {
			close(h.reached)
			<-h.release
		}
		if _, err := server.Write(rec.buf.Bytes()); err != nil {
			return
		}
	}
}

// recorder reads from r and keeps every byte read: one message's bytes.
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (c *recorder) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.buf.Write(b[:n])
	return n, err
}

// rawTransport is a read-only TTransport that reads exactly what the
// protocol asks for (no read-ahead past a message).
type rawTransport struct{ r io.Reader }

func (t rawTransport) Read(b []byte) (int, error) { return t.r.Read(b) }
func (rawTransport) Write([]byte) (int, error)    { return 0, io.ErrClosedPipe }
func (rawTransport) Close() error                 { return nil }
func (rawTransport) Flush(context.Context) error  { return nil }
func (rawTransport) RemainingBytes() uint64       { return ^uint64(0) }
func (rawTransport) IsOpen() bool                 { return true }
func (rawTransport) Open() error                  { return nil }
