package sync

import (
	"math/rand/v2"
	"time"
)

// Backoff spaces out retries of a failing table: Initial after the first
// failure, doubling per consecutive failure, capped at Max, each delay
// jittered to a uniform value in [d/2, d] so tables do not retry in step.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	// Jitter maps a delay to the one used; nil means uniform in [d/2, d].
	Jitter func(time.Duration) time.Duration
}

// DefaultBackoff is 30s doubling up to 30m.
func DefaultBackoff() Backoff { return Backoff{Initial: 30 * time.Second, Max: 30 * time.Minute} }

// Delay returns the wait after the given number of consecutive failures
// (0 means no wait).
func (b Backoff) Delay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	if b.Initial <= 0 {
		b = DefaultBackoff()
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	d := b.Initial
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if b.Jitter != nil {
		return b.Jitter(d)
	}
	return d/2 + rand.N(d/2+1)
}
