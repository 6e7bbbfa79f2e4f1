package sync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
)

// deltarsWriter is a running events/testdata/events/writer.py: a delta-rs writer
// committing to the lake's S3 endpoint.
type deltarsWriter struct {
	t   testing.TB
	in  io.WriteCloser
	out *bufio.Scanner
}

func startWriter(t testing.TB, py, endpoint string) *deltarsWriter {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("events", "testdata", "events", "writer.py"), endpoint)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &testLogWriter{t: t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &deltarsWriter{t: t, in: in, out: bufio.NewScanner(out)}
}

// commit runs one delta-rs write ("create" or "append") and returns the
// version it committed.
func (w *deltarsWriter) commit(op, uri string) int64 {
	w.t.Helper()
	if _, err := fmt.Fprintf(w.in, "%s %s\n", op, uri); err != nil {
		w.t.Fatal(err)
	}
	if !w.out.Scan() {
		w.t.Fatalf("writer.py ended: %v", w.out.Err())
	}
	var r struct{ Version int64 }
	if err := json.Unmarshal(w.out.Bytes(), &r); err != nil {
		w.t.Fatalf("writer.py answered %q: %v", w.out.Text(), err)
	}
	return r.Version
}

type testLogWriter struct{ t testing.TB }

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("writer.py: %s", p)
	return len(p), nil
}

// TestEventsEndToEndDeltaRS: delta-rs commits to tables registered in the
// catalog (the real server when DELTASYNC_UC_URL is set); no cron cycle
// runs after the first, and each commit's S3 notification brings the
// catalog's record to the new version.
func TestEventsEndToEndDeltaRS(t *testing.T) {
	py := deltarsPython(t)
	rg := newEventRig(t, newEnv(t), nil)
	w := startWriter(t, py, rg.lake.endpoint)
	ctx := context.Background()
	tables := []string{"orders", "events"}
	for _, n := range tables {
		if v := w.commit("create", "s3://lake/w/"+n); v != 0 {
			t.Fatalf("create %s: version %d", n, v)
		}
		snap, err := openLog(rg.lake.location(n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sync.Register(ctx, kindOf(rg.client), snap, rg.name(n), catalogLocation(rg.lake.location(n))); err != nil {
			t.Fatalf("register %s: %v", n, err)
		}
	}
	if rep := rg.rec.Sync(ctx); rep.Failed() || len(rep.Results) != len(tables) {
		t.Fatalf("first cycle: %s", rep.Summary())
	}
	rg.run()
	for i := 0; i < 3; i++ {
		for _, n := range tables {
			v := w.commit("append", "s3://lake/w/"+n)
			rg.publish(s3Event("lake", fmt.Sprintf("w/%s/_delta_log/%020d.json", n, v), time.Now()))
			rg.waitFor(fmt.Sprintf("%s at version %d", n, v), func() bool { return rg.watermark(n) == v })
		}
	}
	rg.waitFor("all acknowledged", func() bool { return rg.counter("deltasync_events_pending_tables") == 0 })
	if got := rg.counter("deltasync_event_lag_seconds"); got != 6 {
		t.Errorf("lag observations = %v, want 6", got)
	}
}
