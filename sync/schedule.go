package sync

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule says when the next cycle starts.
type Schedule = cron.Schedule

// MinInterval is the shortest "@every" interval ParseSchedule accepts.
const MinInterval = time.Second

// ParseSchedule accepts "@every 1m" (at least MinInterval), the cron
// descriptors (@hourly, ...) and standard five-field cron expressions.
func ParseSchedule(spec string) (Schedule, error) {
	// cron turns any interval below a second, even a negative one, into
	// one second: refuse those rather than run cycles back to back.
	if rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(rest)); err == nil && d < MinInterval {
			return nil, fmt.Errorf("schedule %q: the interval must be at least %s", spec, MinInterval)
		}
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return s, nil
}

// Loop runs cycle once at once, then at every time sched yields, each start
// delayed by a random jitter in [0, jitter). It returns when ctx is done,
// never interrupting a running cycle: the cycle itself receives ctx and is
// expected to finish the table in flight and return.
func Loop(ctx context.Context, sched Schedule, jitter time.Duration, cycle func(context.Context)) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		cycle(ctx)
		now := time.Now()
		next := sched.Next(now)
		if jitter > 0 {
			next = next.Add(rand.N(jitter))
		}
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}
