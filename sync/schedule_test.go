package sync

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestLoopRunsOnScheduleAndStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sched, err := ParseSchedule("@every 1m")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var starts []time.Duration
		begin := time.Now()
		done := make(chan error)
		go func() {
			done <- Loop(ctx, sched, 0, func(context.Context) { starts = append(starts, time.Since(begin)) })
		}()
		time.Sleep(150 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Loop: %v", err)
		}
		want := []time.Duration{0, time.Minute, 2 * time.Minute}
		if len(starts) != len(want) {
			t.Fatalf("cycles started at %v, want %v", starts, want)
		}
		for i := range want {
			if starts[i] != want[i] {
				t.Errorf("cycle %d started at %v, want %v", i, starts[i], want[i])
			}
		}
	})
}

func TestLoopJitterStaysInWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sched, _ := ParseSchedule("@every 1m")
		ctx, cancel := context.WithCancel(t.Context())
		var starts []time.Time
		go func() {
			_ = Loop(ctx, sched, 10*time.Second, func(context.Context) { starts = append(starts, time.Now()) })
		}()
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		cancel()
		synctest.Wait()
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Sub(starts[i-1])
			if gap < 59*time.Second || gap >= time.Minute+10*time.Second { // cron truncates to whole seconds
				t.Errorf("gap %d = %v, want in [59s, 1m10s)", i, gap)
			}
		}
		if len(starts) < 9 {
			t.Errorf("only %d cycles in 10m", len(starts))
		}
	})
}

func TestParseScheduleRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "every minute", "* * *", "@every -1m", "@every 0s", "@every 1ms", "@every  999ms"} {
		if _, err := ParseSchedule(s); err == nil {
			t.Errorf("ParseSchedule(%q): want error", s)
		}
	}
	for _, s := range []string{"@every 30s", "@every 1s", "*/5 * * * *", "@hourly"} {
		if _, err := ParseSchedule(s); err != nil {
			t.Errorf("ParseSchedule(%q): %v", s, err)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 10 * time.Second, Jitter: func(d time.Duration) time.Duration { return d }}
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for n, w := range want {
		if got := b.Delay(n); got != w {
			t.Errorf("Delay(%d) = %v, want %v", n, got, w)
		}
	}
	b.Jitter = nil
	for i := 0; i < 100; i++ {
		if d := b.Delay(3); d < 2*time.Second || d > 4*time.Second {
			t.Fatalf("jittered Delay(3) = %v, want in [2s, 4s]", d)
		}
	}
}
