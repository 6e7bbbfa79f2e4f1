package uc

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// RetryPolicy says how a request is resent after a 5xx, a 429, a timeout or
// a connection error. The identical request (same body bytes) is resent; a
// 409 or any other 4xx goes back to the caller. Zero fields take defaults.
type RetryPolicy struct {
	// MaxAttempts counts the first try; 1 disables retries. Default 4.
	MaxAttempts int
	// BaseDelay is the first backoff; it doubles per attempt. Default 200ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff. Default 10s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a server's Retry-After. Default 2m.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done (tests inject a fake). Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter maps a backoff to the delay actually used. Default: uniform in [d/2, d].
	Jitter func(d time.Duration) time.Duration
	// Now is the clock used to read HTTP-date Retry-After values. Default time.Now.
	Now func() time.Time
	// OnWait, if set, is told of every wait before a retry: the operation,
	// the attempts made so far, the wait, the server's Retry-After (0 when
	// none; the wait is capped at MaxRetryAfter) and the error being retried.
	OnWait func(op string, attempt int, wait, retryAfter time.Duration, err error)
}

// DefaultRetryPolicy returns the defaults described on RetryPolicy.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{}.withDefaults()
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 200 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 10 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	if p.Jitter == nil {
		p.Jitter = func(d time.Duration) time.Duration {
			if d <= 1 {
				return d
			}
			return d/2 + rand.N(d/2+1)
		}
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

// backoff is the delay before attempt n+1 (n ≥ 1 attempts made so far).
func (p RetryPolicy) backoff(n int, retryAfter time.Duration) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	d = p.Jitter(d)
	if retryAfter > d {
		d = min(retryAfter, p.MaxRetryAfter)
	}
	return d
}

// Sleep waits d or until ctx is done, whichever is first: the retry
// policy's default Sleep, for wrappers that add to it.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads a Retry-After header: delta-seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Retryable reports whether err is worth resending the identical request
// for: an APIError with status 5xx (but not 501 Not Implemented or 505) or
// 429, a timeout or stall (ErrStalled), or a connection error. A 409 (reload and re-plan), any
// other 4xx, and context cancellation are not.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if e, ok := asAPIError(err); ok {
		if e.refused() {
			return false // the same request gets the same answer
		}
		switch e.Status {
		case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
			return false
		}
		return e.Status >= 500 || e.Status == http.StatusTooManyRequests
	}
	if errors.Is(err, ErrStalled) {
		return true // a stall, like a timeout
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // timeouts, dial and read errors
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded)
}
