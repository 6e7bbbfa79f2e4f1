package sync_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/events"
)

// BenchmarkEventsCommitToSync measures commit → catalog in sync over 200
// delta-rs commits on 20 tables (round robin, one writer), with events on
// (a cron schedule of hours: only events sync) and with the cron-only
// default (@every 1m, 5s jitter). Latency runs from the writer's commit
// returning to the catalog's watermark showing the version (polled every
// 20ms on the in-process uctest catalog). Run with -benchtime=1x.
//
//	DELTASYNC_PYTHON=... go test ./sync -run '^$' -bench EventsCommitToSync -benchtime=1x
func BenchmarkEventsCommitToSync(b *testing.B) {
	py := os.Getenv("DELTASYNC_PYTHON")
	if py == "" {
		b.Skip("DELTASYNC_PYTHON unset: needs a python with deltalake")
	}
	for _, mode := range []string{"events", "cron-only"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				lat := commitToSync(b, py, mode == "events", 20, 200)
				slices.Sort(lat)
				q := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))].Seconds() }
				b.ReportMetric(q(0.5), "p50-s")
				b.ReportMetric(q(0.99), "p99-s")
				b.ReportMetric(lat[len(lat)-1].Seconds(), "max-s")
			}
		})
	}
}

func commitToSync(b *testing.B, py string, withEvents bool, tables, commits int) []time.Duration {
	b.StopTimer()
	rg := newEventRig(b, uctestEnv(b), func(o *events.Options) {
		o.Debounce = 100 * time.Millisecond
		o.Concurrency = 4
		o.Retry = sync.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	})
	w := startWriter(b, py, rg.lake.endpoint)
	ctx := context.Background()
	names := make([]string, tables)
	for i := range names {
		names[i] = fmt.Sprintf("t%02d", i)
		w.commit("create", "s3://lake/w/"+names[i])
		snap, err := openLog(rg.lake.location(names[i]))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sync.Register(ctx, kindOf(rg.client), snap, rg.name(names[i]), catalogLocation(rg.lake.location(names[i]))); err != nil {
			b.Fatal(err)
		}
	}
	rg.rec.Sync(ctx)
	loopCtx, stop := context.WithCancel(ctx)
	var loopDone stdsync.WaitGroup
	if withEvents {
		rg.run()
	} else {
		sched, _ := sync.ParseSchedule("@every 1m")
		loopDone.Go(func() {
			_ = sync.Loop(loopCtx, sched, 5*time.Second, func(ctx context.Context) { rg.rec.Sync(ctx) })
		})
	}
	defer func() { stop(); loopDone.Wait() }()

	type pending struct {
		table   string
		version int64
		at      time.Time
	}
	var mu stdsync.Mutex
	var waiting []pending
	var lat []time.Duration
	var done atomic.Bool
	var poller stdsync.WaitGroup
	poller.Go(func() {
		for !done.Load() || func() bool { mu.Lock(); defer mu.Unlock(); return len(waiting) > 0 }() {
			mu.Lock()
			ws := slices.Clone(waiting)
			mu.Unlock()
			seen := map[string]int64{}
			for _, p := range ws {
				if _, ok := seen[p.table]; !ok {
					seen[p.table] = rg.watermark(p.table)
				}
			}
			now := time.Now()
			mu.Lock()
			waiting = slices.DeleteFunc(waiting, func(p pending) bool {
				if seen[p.table] >= p.version && seen[p.table] != 0 {
					lat = append(lat, now.Sub(p.at))
					return true
				}
				return false
			})
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	})
	b.StartTimer()
	for i := range commits {
		n := names[i%tables]
		v := w.commit("append", "s3://lake/w/"+n)
		at := time.Now()
		mu.Lock()
		waiting = append(waiting, pending{n, v, at})
		mu.Unlock()
		if withEvents { // the store's notification for the new commit
			rg.publish(s3Event("lake", fmt.Sprintf("w/%s/_delta_log/%020d.json", n, v), at))
		}
	}
	done.Store(true)
	poller.Wait()
	b.StopTimer()
	return lat
}

// BenchmarkEventsIdleStorageRequests counts storage requests per idle table
// over one simulated hour of cron cycles (@every 1m → 60 cycles, the clock
// advanced a minute per cycle), with events off and on (resync 1h). It
// reports requests per table per hour.
func BenchmarkEventsIdleStorageRequests(b *testing.B) {
	for _, mode := range []string{"events-off", "events-on"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				b.ReportMetric(idleRequests(b, mode == "events-on", 5), "requests/table/hour")
			}
		})
	}
}

func idleRequests(b *testing.B, withEvents bool, tables int) float64 {
	b.StopTimer()
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	e := uctestEnv(b)
	rg := newEventRig(b, e, func(o *events.Options) { o.Now = clock; o.ResyncInterval = time.Hour })
	var rec *sync.Reconciler
	if withEvents {
		rec = rg.rec
		rg.run()
	} else {
		rec = e.reconciler([]sync.Rule{{Include: []string{e.catalog + "." + e.schema + ".*"}}})
	}
	names := make([]string, tables)
	for i := range names {
		names[i] = fmt.Sprintf("idle%02d", i)
		rg.table("basic_partitioned", names[i], -1)
	}
	ctx := context.Background()
	rec.Sync(ctx) // the first full read
	before := 0
	for _, n := range names {
		before += rg.lake.requestsOf(n)
	}
	b.StartTimer()
	for range 60 {
		offset.Add(int64(time.Minute))
		rec.Sync(ctx)
	}
	b.StopTimer()
	total := 0
	for _, n := range names {
		total += rg.lake.requestsOf(n)
	}
	return float64(total-before) / float64(tables)
}
