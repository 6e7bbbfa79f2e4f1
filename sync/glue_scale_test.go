package sync_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/glue"
	"github.com/deltasync/deltasync/sync"
)

// The Glue scale measurement (issue #42, BENCHMARKS.md): N tables
// registered in moto as Spark on EMR leaves them (sparkInput), one
// Reconciler at the daemon's default concurrency on a client through the
// fakeglue proxy with 10 ms per Glue request (the latency the fleet
// benchmarks give a catalog request), and per cycle its wall, CPU, Glue
// requests per operation and the process's peak RSS since the first
// cycle. Tables share logs as TestHMSScale's do (ten copies of
// basic_partitioned; 1% have a log each, deletion_vectors_disabled at
// version 1, which the drift cycle advances to version 3).
//
//	set -a; source /work/svc/exports.sh; set +a   # DELTASYNC_MOTO_URL
//	DELTASYNC_GLUE_SCALE=10000 go test ./sync -run '^TestGlueScale$' -v -timeout 0
//
// DELTASYNC_GLUE_SCALE_LATENCY is the proxy's latency (default 10ms),
// DELTASYNC_GLUE_SCALE_CONCURRENCY the reconciler's (default 0: the
// daemon's), DELTASYNC_GLUE_SCALE_WRITERS the registering goroutines
// (default 8). Unset, it plays the same script over 150 tables.
const (
	glueScaleEnv            = "DELTASYNC_GLUE_SCALE"
	glueScaleLatencyEnv     = "DELTASYNC_GLUE_SCALE_LATENCY"
	glueScaleConcurrencyEnv = "DELTASYNC_GLUE_SCALE_CONCURRENCY"
	glueScaleWritersEnv     = "DELTASYNC_GLUE_SCALE_WRITERS"
)

func TestGlueScale(t *testing.T) {
	n := envInt(t, glueScaleEnv, 150)
	if n <= 0 {
		t.Fatalf("%s: want a number of tables", glueScaleEnv)
	}
	latency := 10 * time.Millisecond
	if v := os.Getenv(glueScaleLatencyEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", glueScaleLatencyEnv, v, err)
		}
		latency = d
	}
	conc := envInt(t, glueScaleConcurrencyEnv, 0)
	writers := envInt(t, glueScaleWritersEnv, 8)
	e := newGlueEnv(t)
	ctx := context.Background()

	drift := max(1, n/100)
	shared := make([]string, min(hmsScaleSharedLogs, n))
	for i := range shared {
		_, shared[i] = logTable(t, "basic_partitioned", "shared"+strconv.Itoa(i), -1)
	}
	driftDirs := make([]string, drift)
	locs := make([]string, n)
	for i := range n {
		if i < drift {
			driftDirs[i], locs[i] = logTable(t, "deletion_vectors_disabled", "drift"+strconv.Itoa(i), 1)
		} else {
			locs[i] = shared[i%len(shared)]
		}
	}
	name := func(i int) string { return fmt.Sprintf("t%05d", i) }

	start := time.Now()
	next := atomic.Int64{}
	errs := make([]error, writers)
	var wg gosync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || errs[w] != nil {
					return
				}
				errs[w] = e.plain.CreateTable(ctx, e.db, sparkInput(name(i), locs[i]))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tables registered in moto (%s) by %d writers in %v; proxy latency %v", n, e.db, writers, time.Since(start).Round(time.Millisecond), latency)

	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{glue.DefaultKindName + "." + e.db + ".*"}}})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sync.NewStoragePolicy([]string{"file://" + os.TempDir() + "/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sync.New(sync.Options{Catalog: glue.NewKind(e.client, glue.KindOptions{}), Selector: sel, Storage: pol,
		Concurrency: conc, ResyncInterval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	e.proxy.SetLatency(latency)
	resetPeakRSS(t)
	dbs, err := e.plain.Databases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steadyWant := map[string]int{"GetDatabases": (len(dbs) + glue.PageSize - 1) / glue.PageSize, "GetTables": (n + glue.PageSize - 1) / glue.PageSize}
	cycle := func(label string) (*sync.Report, map[string]int) {
		e.proxy.ResetCounts()
		cpu0 := cpuTime()
		start := time.Now()
		rep := r.Sync(ctx)
		wall, cpu := time.Since(start), cpuTime()-cpu0
		ops := e.proxy.Counts()
		total := 0
		for _, c := range ops {
			total += c
		}
		parts := make([]string, 0, len(ops))
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			parts = append(parts, op+"="+strconv.Itoa(ops[op]))
		}
		t.Logf("%-9s wall %v, CPU %v (%v per table); %d Glue requests (%.4f per table: %s); peak RSS %d MiB",
			label+":", wall.Round(time.Millisecond), cpu.Round(time.Millisecond), (cpu / time.Duration(n)).Round(time.Microsecond),
			total, float64(total)/float64(n), strings.Join(parts, " "), peakRSSKiB(t)/1024)
		if rep.Err != nil {
			t.Fatalf("%s: %s", label, rep.Summary())
		}
		return rep, ops
	}
	rep, _ := cycle("first")
	if got := rep.Count(sync.OutcomeSynced); got != n {
		t.Fatalf("first cycle: %d of %d synced: %s", got, n, rep.Summary())
	}
	for i := range 3 {
		rep, ops := cycle("steady " + strconv.Itoa(i+1))
		if got := rep.Count(sync.OutcomeUnchanged); got != n {
			t.Fatalf("steady cycle: %d of %d unchanged: %s", got, n, rep.Summary())
		}
		if !maps.Equal(ops, steadyWant) {
			t.Errorf("steady cycle over %d tables: requests %v, want %v (nothing per table)", n, ops, steadyWant)
		}
		if per := float64(ops["GetDatabases"]+ops["GetTables"]) / float64(n); n >= 1000 && per > 0.02 {
			t.Errorf("steady cycle: %.4f Glue requests per unchanged table, target ≤ 0.02", per)
		}
	}
	for _, d := range driftDirs {
		copyLog(t, "deletion_vectors_disabled", d, -1)
	}
	rep, ops := cycle("1% drift")
	if got := rep.Count(sync.OutcomeSynced); got != drift {
		t.Errorf("drift cycle: %d synced, want %d: %s", got, drift, rep.Summary())
	}
	// Per drifted table one UpdateTable and the GetTable confirming it.
	if ops["UpdateTable"] != drift || ops["GetTable"] != drift {
		t.Errorf("drift cycle: requests %v, want %d UpdateTable and %d GetTable on top of the listing", ops, drift, drift)
	}
}

// resetPeakRSS resets the process's peak RSS (VmHWM) where Linux allows
// it, so that peakRSSKiB is the reconciler's, not the set-up's.
func resetPeakRSS(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("peak RSS not reset (%v): it includes the set-up", err)
	}
}

// peakRSSKiB is the process's VmHWM (0 where /proc has none).
func peakRSSKiB(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Logf("VmHWM %q: %v", v, err)
			}
			return kib
		}
	}
	return 0
}
