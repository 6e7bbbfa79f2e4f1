package deltalog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"gocloud.dev/blob"
)

// The round trips of a Load, counted exactly: every request waits
// rtLatency, inside a synctest bubble, where time moves only when every
// goroutine of the Load is blocked. A Load's elapsed (bubble) time is then
// its number of dependent request waves times rtLatency, whatever the
// machine's speed or load: requests sent together cost one wave.
const rtLatency = 20 * time.Millisecond

// roundTripBound is issue #26's bound for one Load over an object store:
// the hint, the LIST (each page), ⌈commits / in-flight⌉ for the commit
// GETs, and one more (the newest commit read alone, or the checkpoint's
// second read). in-flight is a Load's GETs in flight, prefetchMax, or
// fewer where the commits it reads whole are big: as many as prefetchBytes
// holds of the largest (commitReadBytes; a streamed commit holds its read
// buffer only).
func roundTripBound(lists, commitGets int, largestCommit int64) int {
	inFlight := min(prefetchMax, max(1, int(prefetchBytes/max(1, commitReadBytes(largestCommit)))))
	return 1 + lists + (commitGets+inFlight-1)/inFlight + 1
}

// loadRounds loads tbl, whose requests c counts, with rtLatency per
// request, and checks the round trips against roundTripBound.
func loadRounds(t *testing.T, tbl *Table, c *countingBucket) int {
	t.Helper()
	c.latency = rtLatency
	start := time.Now()
	if _, err := tbl.Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	rounds, lists := wavesSince(t, start), c.lists
	commits, largest := countCommitGets(c)
	bound := roundTripBound(lists, commits, largest)
	t.Logf("%d round trips (%d LIST pages, %d commit GETs, the largest %d bytes; bound %d)", rounds, lists, commits, largest, bound)
	if rounds > bound {
		t.Errorf("%d round trips for %d LIST pages and %d commits, want at most %d", rounds, lists, commits, bound)
	}
	return rounds
}

// wavesSince is the bubble time since start in whole rtLatency waves.
func wavesSince(t *testing.T, start time.Time) int {
	t.Helper()
	d := time.Since(start)
	if d%rtLatency != 0 {
		t.Fatalf("elapsed %v is not a whole number of %v round trips: is a request outside the bubble?", d, rtLatency)
	}
	return int(d / rtLatency)
}

// countCommitGets returns the commits c saw read and the largest of them.
func countCommitGets(c *countingBucket) (n int, largest int64) {
	_, gets := c.counts()
	for _, k := range uniqueKeys(gets) {
		if p := parseLogPath(k); p.Kind == kindCommit {
			n++
			largest = max(largest, c.bytesRead(k))
		}
	}
	return n, largest
}

// appendCommits writes n more commits after version from, each a copy of
// the real commit template (which must hold neither protocol nor metaData),
// its lines repeated until the commit is at least minBytes long.
func appendCommits(t *testing.T, mb *blob.Bucket, template string, from int64, n int, minBytes int) {
	t.Helper()
	data, err := mb.ReadAll(context.Background(), template)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `{"protocol"`) || strings.Contains(string(data), `{"metaData"`) {
		t.Fatalf("%s holds protocol or metaData: not a plain commit", template)
	}
	text := strings.Repeat(string(data), max(1, (minBytes+len(data)-1)/len(data)))
	for v := from + 1; v <= from+int64(n); v++ {
		put(t, mb, commitKey(v), text)
	}
}

// TestLoadRoundTrips holds every loadable corpus log, and the long tails
// real writers leave (delta-rs checkpoints every 100 commits, so a table
// can have 99 commits and no checkpoint), to the bound of issue #26.
// Where the count is known exactly, it is asserted exactly.
func TestLoadRoundTrips(t *testing.T) {
	for _, row := range readManifest(t) {
		if strings.HasPrefix(row.Outcome, "error") {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tbl, _, c := memTable(t, row.Name)
				loadRounds(t, tbl, c)
			})
		})
	}
	tails := []struct {
		name, base, template string
		from                 int64
		n, minBytes          int
		want                 int // exact round trips
	}{
		// hint, LIST, the newest commit alone, then 99 at 32 in flight
		// (4): 7. The doubling window took 10.
		{"no checkpoint, 100 commits (delta-rs before its first checkpoint)", "basic_partitioned", commitKey(1), 1, 98, 0, 7},
		// hint, LIST, newest alone, 19 more in one wave: 4 (was 7).
		{"no checkpoint, 21 commits", "basic_partitioned", commitKey(1), 1, 19, 0, 4},
		// hint, LIST, then 104 commits at 31 in flight beside the
		// checkpoint's read (4 waves): 6.
		{"checkpoint and 104 commits", "checkpoint", commitKey(14), 14, 100, 0, 6},
		// Big commits (a batch of thousands of files) stream through a
		// 64 KiB buffer, so 32 are in flight as for small ones: 5. Counted
		// by their listed 3 MiB against prefetchBytes, 5 were: 11.
		{"no checkpoint, 40 commits of 3 MiB", "basic_partitioned", commitKey(1), 1, 39, 3 << 20, 5},
		// Commits read whole just under 1 MiB: 18 fit in prefetchBytes,
		// so the newest, then 39 in 3 waves: 6.
		{"no checkpoint, 40 commits of 900 KiB", "basic_partitioned", commitKey(1), 1, 39, 900 << 10, 6},
	}
	for _, tc := range tails {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tbl, mb, c := memTable(t, tc.base)
				appendCommits(t, mb, tc.template, tc.from, tc.n, tc.minBytes)
				if rounds := loadRounds(t, tbl, c); rounds != tc.want {
					t.Errorf("%d round trips, want %d", rounds, tc.want)
				}
			})
		})
	}
}

// TestRefreshRoundTrips: a refresh over k new commits is its LIST, the
// newest commit alone and the rest at the full window: 3 round trips for
// 2 to 33 new commits (the doubling window took 1 + ⌈log2(k+1)⌉).
func TestRefreshRoundTrips(t *testing.T) {
	for _, k := range []int{1, 6, 33} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tbl, mb, c := memTable(t, "basic_partitioned")
				prev, err := tbl.Load(context.Background(), LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				appendCommits(t, mb, commitKey(1), prev.Version, k, 0)
				c.reset()
				c.latency = rtLatency
				start := time.Now()
				snap, _, err := tbl.Refresh(context.Background(), prev, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if want := prev.Version + int64(k); snap.Version != want {
					t.Fatalf("refreshed to %d, want %d", snap.Version, want)
				}
				rounds := wavesSince(t, start)
				commits, _ := countCommitGets(c)
				t.Logf("%d round trips (%d LIST pages, %d commit GETs)", rounds, c.lists, commits)
				want := 3
				if k == 1 {
					want = 2
				}
				if rounds != want {
					t.Errorf("%d round trips for %d new commits (%d LIST pages, %d commit GETs), want %d", rounds, k, c.lists, commits, want)
				}
			})
		})
	}
}
