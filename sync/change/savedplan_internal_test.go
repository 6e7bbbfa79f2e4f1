package change

import (
	"strings"
	"testing"
)

// endless is a reader that never ends (a device, a pipe that never closes),
// counting what was read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A plan file larger than the bound is refused with an error naming the
// file and the bound, after reading at most one byte more than it.
func TestReadSavedPlanIsBounded(t *testing.T) {
	const limit = 1 << 20
	r := &endless{}
	sp, err := readSavedPlan(r, "plan.json", limit)
	if err == nil || sp != nil || !strings.Contains(err.Error(), "plan.json") || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("readSavedPlan(endless) = %v, %v", sp, err)
	}
	if r.n > limit+1 {
		t.Errorf("read %d bytes of an endless file, bound %d", r.n, limit)
	}
}
