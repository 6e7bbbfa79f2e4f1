package deltalog

import (
	"errors"
	stdsync "sync"
	"sync/atomic"
	"testing"
)

// TestSharedClientsMakeOnce: concurrent Opens of one key make its client
// once and all get it; a failure is returned to the Opens that waited for
// it but not kept, so a later Open tries again; other keys are apart.
func TestSharedClientsMakeOnce(t *testing.T) {
	var s sharedClients[*int]
	var made atomic.Int32
	create := func() (*int, error) {
		made.Add(1)
		v := new(int)
		return v, nil
	}
	var wg stdsync.WaitGroup
	got := make([]*int, 32)
	for i := range got {
		wg.Go(func() {
			c, err := s.get("a", create)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	if made.Load() != 1 {
		t.Errorf("client made %d times for one key, want once", made.Load())
	}
	for i, c := range got {
		if c != got[0] {
			t.Errorf("Open %d got a different client", i)
		}
	}
	if c, _ := s.get("b", create); c == got[0] || made.Load() != 2 {
		t.Errorf("another key shares the client (made %d)", made.Load())
	}

	boom := errors.New("no credentials")
	if _, err := s.get("c", func() (*int, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("get = %v, want the maker's error", err)
	}
	c, err := s.get("c", create)
	if err != nil || c == nil {
		t.Errorf("after a failure the next get = %v, %v; want a new client", c, err)
	}
}
