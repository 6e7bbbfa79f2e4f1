//go:build unix

package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/deltalog"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/metrics"
)

// BenchmarkScaleS3Throttled (BENCHMARKS.md, "A throttled bucket in a
// fleet"): the fleet of BenchmarkScaleS3 split over two buckets of the
// same S3 process, even tables in "lake", odd ones in "hot". After a
// first cycle, steady cycles without faults, then one in which "hot"
// answers its next 2 × (its tables) requests with 503 SlowDown. What is
// measured is the cold bucket's cycle time: from the start of Sync to the
// answer of the last request "lake" served (its tables' checks), against
// the same in the cycles without faults.
//
// With DELTASYNC_SCALE_S3_HOT_RATE=R the last cycle throttles "hot" by
// rate instead, as S3 does: a token bucket filled at R requests per
// second (DELTASYNC_SCALE_S3_HOT_BURST tokens, default R/10), every
// request above it answered SlowDown. Then what is measured is also the
// hot bucket's cycle (to its last answer) against the ideal, its
// requests served over R, with the SlowDowns it was answered and the
// requests that failed as ErrThrottled.
//
//	DELTASYNC_SCALE_S3_TABLES=2000 go test ./sync -run '^$' -bench '^BenchmarkScaleS3Throttled$' -benchtime 1x -v -timeout 0
func BenchmarkScaleS3Throttled(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv(scaleS3TablesEnv))
	if n <= 0 || os.Getenv(scaleS3ServeEnv) != "" || os.Getenv(scaleServeEnv) != "" {
		b.Skip("set DELTASYNC_SCALE_S3_TABLES=N to run the throttled fleet-on-S3 benchmark")
	}
	catalogLatency := os.Getenv(scaleLatencyEnv)
	if catalogLatency == "" {
		catalogLatency = "10ms"
	}
	var hotRate float64
	hotBurst := 0
	if v := os.Getenv(scaleS3HotRateEnv); v != "" {
		var err error
		if hotRate, err = strconv.ParseFloat(v, 64); err != nil || hotRate <= 0 {
			b.Fatalf("%s=%q: want requests per second", scaleS3HotRateEnv, v)
		}
		hotBurst = max(1, int(hotRate/10))
		if v := os.Getenv(scaleS3HotBurstEnv); v != "" {
			if hotBurst, err = strconv.Atoi(v); err != nil || hotBurst <= 0 {
				b.Fatalf("%s=%q: want a count of requests", scaleS3HotBurstEnv, v)
			}
		}
	}
	dir := scaleTables(b, n)
	s3URL := startScaleS3(b, n, dir, scaleS3HotEnv+"=1")
	ucURL := startScaleCatalog(b, n, dir, scaleLocationEnv+"=s3://lake", scaleLocationOddEnv+"=s3://hot", scaleLatencyEnv+"="+catalogLatency)
	b.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	b.Setenv("AWS_REGION", "us-east-1")
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	reg := prometheus.NewRegistry()
	metrics := metrics.New(reg, "scale")
	gates, err := deltalog.NewStorageGates(deltalog.StorageLimits{}) // the defaults, as cmd makes them
	if err != nil {
		b.Fatal(err)
	}
	metrics.ObserveStorageGates(gates)
	opts := sync.Options{Metrics: metrics, ResyncInterval: time.Hour, LogOptions: []deltalog.Option{deltalog.WithStorageGates(gates)}}
	client, err := uc.New(ucURL, uc.Options{IdleConnsPerHost: 6})
	if err != nil {
		b.Fatal(err)
	}
	opts.Catalog = kindOf(client)
	if opts.Selector, err = sync.NewSelector([]sync.Rule{{Include: []string{"scale.*.*"}}}); err != nil {
		b.Fatal(err)
	}
	bucket := map[string]string{"endpoint": s3URL, "region": "us-east-1", "use_path_style": "true", "disable_https": "true"}
	if opts.Storage, err = sync.NewStoragePolicy([]string{"s3://lake/**", "s3://hot/**"},
		[]sync.BucketOptions{{Location: "s3://lake", Options: bucket}, {Location: "s3://hot", Options: bucket}}); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	opts.Now = func() time.Time { return now }
	rec, err := sync.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	ctx := context.Background()

	type result struct {
		name                      string
		wall, cold, hot           time.Duration
		lakeReqs, hotReqs, slowed int64
		failedReqs                int64 // failed as ErrThrottled
		unchanged, fail           int
		load                      string
	}
	var results []result
	throttle := func(query string) {
		resp, err := http.Post(s3URL+scaleS3ThrottlePath+"?"+query, "text/plain", nil)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	failedSoFar := func() (n int64) {
		for _, t := range gates.Throttling() {
			n += t.Failed
		}
		return n
	}
	cycle := func(name string, slowDowns int, perSec float64) result {
		loadavg, _ := os.ReadFile("/proc/loadavg")
		takeS3Stats(b, s3URL)
		if slowDowns > 0 {
			throttle(fmt.Sprintf("n=%d", slowDowns))
		}
		if perSec > 0 {
			throttle(fmt.Sprintf("rate=%g&burst=%d", perSec, hotBurst))
			defer throttle("rate=0")
		}
		failedBefore := failedSoFar()
		start := time.Now()
		rep := rec.Sync(ctx)
		wall := time.Since(start)
		st := takeS3Stats(b, s3URL)
		r := result{name: name, wall: wall, cold: time.Unix(0, st.LakeLastNs).Sub(start), hot: time.Unix(0, st.HotLastNs).Sub(start),
			lakeReqs: st.LakeRequests, hotReqs: st.HotRequests, slowed: st.Throttled, failedReqs: failedSoFar() - failedBefore,
			unchanged: rep.Count(sync.OutcomeUnchanged), fail: len(rep.Results) - rep.Count(sync.OutcomeUnchanged), load: string(loadavg[:14])}
		results = append(results, r)
		if len(rep.Results) != n {
			b.Fatalf("%s cycle: %d results of %d tables: %s", name, len(rep.Results), n, rep.Summary())
		}
		return r
	}
	if r := cycle("first", 0, 0); r.unchanged != n {
		b.Fatalf("first cycle: %d of %d unchanged", r.unchanged, n)
	}
	var base []time.Duration
	for i := range 3 {
		r := cycle(fmt.Sprintf("steady %d", i+1), 0, 0)
		if r.unchanged != n {
			b.Fatalf("steady cycle: %d of %d unchanged", r.unchanged, n)
		}
		base = append(base, r.cold)
	}
	var r result
	if hotRate > 0 {
		r = cycle(fmt.Sprintf("hot throttled to %g/s (burst %d)", hotRate, hotBurst), 0, hotRate)
	} else {
		r = cycle("SlowDown burst on hot", n, 0) // n/2 hot tables, 2 SlowDowns each
	}
	if r.lakeReqs != int64((n+1)/2) {
		b.Errorf("the cold bucket served %d requests in the throttled cycle, want %d (one LIST per table)", r.lakeReqs, (n+1)/2)
	}
	for i := range results {
		if results[i].name != "first" && results[i].name != r.name {
			if results[i].lakeReqs != int64((n+1)/2) {
				b.Errorf("%s: the cold bucket served %d requests, want %d", results[i].name, results[i].lakeReqs, (n+1)/2)
			}
		}
	}
	best := min(base[0], base[1], base[2])
	b.Logf("%d tables (%d in lake, %d in hot), GOMAXPROCS %d, S3 20 ms per request, catalog %s", n, (n+1)/2, n/2, runtime.GOMAXPROCS(0), catalogLatency)
	b.Logf("| cycle | wall | cold bucket's cycle (to its last answer) | hot bucket's cycle | lake requests | hot requests | SlowDowns answered | failed as ErrThrottled | unchanged | other outcomes | load average |")
	b.Logf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, c := range results {
		b.Logf("| %s | %.2f s | %.2f s | %.2f s | %d | %d | %d | %d | %d | %d | %s |", c.name, c.wall.Seconds(), c.cold.Seconds(), c.hot.Seconds(),
			c.lakeReqs, c.hotReqs, c.slowed, c.failedReqs, c.unchanged, c.fail, c.load)
	}
	if hotRate > 0 {
		served := r.hotReqs - r.slowed
		ideal := time.Duration(float64(served) / hotRate * float64(time.Second))
		b.Logf("hot bucket: %d requests served in %.2f s, ideal at %g/s %.2f s (%.2f×); %d SlowDowns (%.2f per request served), %d failed as ErrThrottled",
			served, r.hot.Seconds(), hotRate, ideal.Seconds(), r.hot.Seconds()/ideal.Seconds(), r.slowed, float64(r.slowed)/float64(served), r.failedReqs)
		b.ReportMetric(r.hot.Seconds()/ideal.Seconds(), "hot-ideal-ratio")
		b.ReportMetric(float64(r.slowed), "hot-slowdowns")
		b.ReportMetric(float64(r.failedReqs), "hot-failed")
	}
	ratio := r.cold.Seconds() / best.Seconds()
	b.Logf("cold bucket's cycle with the burst / fastest without: %.2f (target ≤ 1.2); / median without: %.2f", ratio,
		r.cold.Seconds()/median3(base).Seconds())
	b.ReportMetric(ratio, "cold-ratio")
	b.ReportMetric(r.cold.Seconds(), "cold-throttled-s")
	b.ReportMetric(best.Seconds(), "cold-base-s")
}

// The rate-based throttle of BenchmarkScaleS3Throttled.
const (
	scaleS3HotRateEnv  = "DELTASYNC_SCALE_S3_HOT_RATE"
	scaleS3HotBurstEnv = "DELTASYNC_SCALE_S3_HOT_BURST"
)

func median3(d []time.Duration) time.Duration {
	a, b, c := d[0], d[1], d[2]
	return max(min(a, b), min(max(a, b), c))
}
