package uc

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// defaultIdleConnsPerHost is how many idle connections to the catalog the
// built-in transport keeps when Options.IdleConnsPerHost is not set (Go's
// default of 2 makes concurrent callers open new connections all the time).
const defaultIdleConnsPerHost = 32

// throttle is the client-wide pacing of requests: an optional token bucket
// (Options.MaxRPS) and a pause set by a 429's Retry-After, shared by every
// goroutine using the Client.
type throttle struct {
	limiter *rate.Limiter // nil: no rate limit
	// pauseUntil is the UnixNano before which no request is sent (a
	// server's Retry-After on a 429).
	pauseUntil atomic.Int64
}

func newThrottle(maxRPS float64, burst int) *throttle {
	t := &throttle{}
	if maxRPS > 0 {
		if burst <= 0 {
			burst = max(1, int(maxRPS))
		}
		t.limiter = rate.NewLimiter(rate.Limit(maxRPS), burst)
	}
	return t
}

// wait blocks until the next request may be sent: after the pause and, with
// a rate limit, when the bucket has a token. sleep and now are the retry
// policy's (injectable in tests). own is a pause the caller set itself and
// has already waited out in its retry backoff (0: none).
func (t *throttle) wait(ctx context.Context, now time.Time, sleep func(context.Context, time.Duration) error, own int64) error {
	var d time.Duration
	var res *rate.Reservation
	if t.limiter != nil {
		res = t.limiter.ReserveN(now, 1)
		d = res.DelayFrom(now)
	}
	if p := t.pauseUntil.Load(); p > now.UnixNano() && p != own {
		d = max(d, time.Duration(p-now.UnixNano()))
	}
	if d <= 0 {
		return nil
	}
	if err := sleep(ctx, d); err != nil {
		if res != nil {
			res.CancelAt(now)
		}
		return err
	}
	return nil
}

// pause holds every request of the client until now+d (a 429's Retry-After)
// and returns that instant (UnixNano).
func (t *throttle) pause(now time.Time, d time.Duration) int64 {
	until := now.Add(d).UnixNano()
	for {
		cur := t.pauseUntil.Load()
		if cur >= until || t.pauseUntil.CompareAndSwap(cur, until) {
			return until
		}
	}
}

// sizeTransport keeps enough idle connections for idle concurrent callers
// and makes sure HTTP/2 is negotiated where a TLS server offers it.
func sizeTransport(tr *http.Transport, idlePerHost int) {
	if idlePerHost <= 0 {
		idlePerHost = defaultIdleConnsPerHost
	}
	tr.MaxIdleConnsPerHost = idlePerHost
	tr.MaxIdleConns = max(tr.MaxIdleConns, idlePerHost)
	tr.ForceAttemptHTTP2 = true // a custom TLSClientConfig would otherwise turn HTTP/2 off
}
