package deltalog

import (
	"context"
	"path/filepath"
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
