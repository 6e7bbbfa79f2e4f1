package uc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// defaultIdleTimeout is Options.IdleTimeout's default.
const defaultIdleTimeout = 10 * time.Second

// stallError is the cause of an attempt given up by its idleWatch.
type stallError struct {
	idle time.Duration
}

func (e *stallError) Error() string {
	return fmt.Sprintf("server stalled: nothing received for %s (IdleTimeout)", e.idle)
}
func (e *stallError) Unwrap() error { return ErrStalled }

// idleWatch gives an attempt up when it makes no progress for idle: a
// step of the request (connection, headers and body written) or a byte of
// the answer resets it, so a server that stalls is left in seconds while
// one that trickles keeps the attempt's whole Timeout. Progress is a
// timestamp the timer reads when it fires (no timer reset per read).
type idleWatch struct {
	idle   time.Duration
	start  time.Time
	last   atomic.Int64 // time of the last progress, since start
	timer  *time.Timer
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// watchIdle returns ctx for one attempt, watched, with the request
// progress events reported to the watch; nil when idle <= 0 (off).
func watchIdle(ctx context.Context, idle time.Duration) (context.Context, *idleWatch) {
	if idle <= 0 {
		return ctx, nil
	}
	wctx, cancel := context.WithCancelCause(ctx)
	w := &idleWatch{idle: idle, start: time.Now(), ctx: wctx, cancel: cancel}
	w.timer = time.AfterFunc(time.Hour, w.check) // set before check can read it
	w.timer.Reset(idle)
	touch := func() { w.touch() }
	trace := &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { touch() },
		ConnectStart:         func(string, string) { touch() },
		ConnectDone:          func(string, string, error) { touch() },
		TLSHandshakeStart:    touch,
		TLSHandshakeDone:     func(tls.ConnectionState, error) { touch() },
		WroteHeaders:         touch,
		WroteRequest:         func(httptrace.WroteRequestInfo) { touch() },
		GotFirstResponseByte: touch,
		Got100Continue:       touch,
	}
	return httptrace.WithClientTrace(wctx, trace), w
}

func (w *idleWatch) touch() {
	if w != nil {
		w.last.Store(int64(time.Since(w.start)))
	}
}

func (w *idleWatch) check() {
	quiet := time.Since(w.start) - time.Duration(w.last.Load())
	if quiet < w.idle {
		w.timer.Reset(w.idle - quiet)
		return
	}
	w.cancel(&stallError{idle: w.idle})
}

// stop ends the watch (the attempt is over).
func (w *idleWatch) stop() {
	if w != nil {
		w.timer.Stop()
		w.cancel(nil)
	}
}

// stalled returns the stall that ended the attempt, or nil.
func (w *idleWatch) stalled() error {
	if w == nil {
		return nil
	}
	var se *stallError
	if errors.As(context.Cause(w.ctx), &se) {
		return se
	}
	return nil
}

// progressBody reports every read of a body that returned bytes.
type progressBody struct {
	io.ReadCloser
	w *idleWatch
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

// watchBodies reports the progress of req's body (when it has one) as it
// is sent, keeping its length and GetBody.
func watchBodies(req *http.Request, w *idleWatch) {
	if w == nil || req.Body == nil || req.Body == http.NoBody {
		return
	}
	req.Body = &progressBody{req.Body, w}
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := get()
			if err != nil {
				return nil, err
			}
			return &progressBody{b, w}, nil
		}
	}
}
