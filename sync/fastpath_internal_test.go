package sync

import (
	"fmt"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
)

// TestFirstResyncSpreadsOverTheInterval: tables verified in the same cycle
// come due for their first full re-read at points spread over the whole
// interval, never later than it.
func TestFirstResyncSpreadsOverTheInterval(t *testing.T) {
	const interval = time.Hour
	r := &Reconciler{opts: Options{ResyncInterval: interval}}
	var quarters [4]int
	const n = 4000
	for i := range n {
		d := r.firstResync(catalog.TableName{Catalog: "main", Schema: fmt.Sprint("s", i%40), Table: fmt.Sprint("t", i)})
		if d <= 0 || d > interval {
			t.Fatalf("table %d: first re-read after %s, want within (0, %s]", i, d, interval)
		}
		quarters[min(3, int(d*4/interval))]++
	}
	for q, c := range quarters {
		if c < n/4*8/10 {
			t.Errorf("quarter %d of the interval holds %d of %d first re-reads: %v", q, c, n, quarters)
		}
	}
}
