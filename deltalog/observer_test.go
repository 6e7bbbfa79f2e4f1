package deltalog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testcorpus"
	"gocloud.dev/blob/fileblob"
)

// TestObserverSeesRequests: WithObserver reports the LIST and GETs of a load.
func TestObserverSeesRequests(t *testing.T) {
	fb, err := fileblob.OpenBucket(filepath.Join(testcorpus.Dir(t), "delta-0.8.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ops := map[string]int{}
	obs := func(op string, _ time.Duration, _ error) { ops[op]++ }
	snap, err := NewTable(fb, "delta-0.8.0", WithObserver(obs)).Load(context.Background(), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 1 {
		t.Errorf("version = %d, want 1", snap.Version)
	}
	if ops["list"] != 1 || ops["get"] < 2 {
		t.Errorf("observed %v, want 1 list and at least 2 gets", ops)
	}
}

// TestConcurrentObserver: WithConcurrentObserver reports the same requests
// as WithObserver, and a Table keeps nothing of its own for it (WithObserver
// wraps the observer in a lock per Table).
func TestConcurrentObserver(t *testing.T) {
	fb, err := fileblob.OpenBucket(filepath.Join(testcorpus.Dir(t), "delta-0.8.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	var mu sync.Mutex
	ops := map[string]int{}
	obs := func(op string, _ time.Duration, _ error) {
		mu.Lock()
		ops[op]++
		mu.Unlock()
	}
	if _, err := NewTable(fb, "delta-0.8.0", WithConcurrentObserver(obs)).Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if ops["list"] != 1 || ops["get"] < 2 {
		t.Errorf("observed %v, want 1 list and at least 2 gets", ops)
	}
	withLock, withoutLock := WithObserver(obs), WithConcurrentObserver(obs)
	serialized := testing.AllocsPerRun(100, func() { NewTable(fb, "t", withLock) })
	concurrent := testing.AllocsPerRun(100, func() { NewTable(fb, "t", withoutLock) })
	// The serialized one adds at least a lock and the closure holding it.
	if serialized < concurrent+2 {
		t.Errorf("NewTable allocates %v objects with a concurrent observer, %v with a serialized one; want at least 2 fewer", concurrent, serialized)
	}
}
