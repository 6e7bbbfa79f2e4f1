package deltalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
)

// budgetCommit is a commit whose metaData line carries a description of
// descBytes bytes.
func budgetCommit(ts string, withProtocol bool, descBytes int) []byte {
	var b strings.Builder
	b.WriteString(`{"commitInfo":{"timestamp":` + ts + `}}` + "\n")
	if withProtocol {
		b.WriteString(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n")
	}
	b.WriteString(`{"metaData":{"id":"a","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"description":"` +
		strings.Repeat("d", descBytes) + `"}}` + "\n")
	return []byte(b.String())
}

// TestTableBudgetAppliesToLoadAndRefresh: WithMaxLoadBytes is the budget of
// every Load and of Refresh's own incremental replay, not only of the full
// Load Refresh falls back to; LoadOptions.MaxLoadBytes still overrides it.
func TestTableBudgetAppliesToLoadAndRefresh(t *testing.T) {
	ctx := context.Background()
	mb := memblob.OpenBucket(nil)
	defer mb.Close()
	put := func(key string, data []byte) {
		t.Helper()
		if err := mb.WriteAll(ctx, "_delta_log/"+key, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("00000000000000000000.json", budgetCommit("1700000000000", true, 10))
	tbl := NewTable(mb, "t", WithMaxLoadBytes(1<<20))
	prev, err := tbl.Load(ctx, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A 3 MiB metaData line arrives: over the Table's 1 MiB budget.
	put("00000000000000000001.json", budgetCommit("1700000001000", false, 3<<20))
	_, how, err := tbl.Refresh(ctx, prev, LoadOptions{})
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("Refresh over the Table's budget: %v (%v), want ErrBudgetExceeded", how, err)
	}
	if !strings.Contains(err.Error(), "00000000000000000001.json") {
		t.Errorf("the error does not name the commit: %v", err)
	}
	// Refresh's incremental replay keeps a Load's own budget too.
	if _, how, err := NewTable(mb, "t").Refresh(ctx, prev, LoadOptions{MaxLoadBytes: 1 << 20}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("Refresh with LoadOptions.MaxLoadBytes 1 MiB: %v (%v), want ErrBudgetExceeded", how, err)
	}
	if _, err := tbl.Load(ctx, LoadOptions{}); !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("Load over the Table's budget: %v, want ErrBudgetExceeded", err)
	}
	// The Load's own budget wins over the Table's.
	if snap, err := tbl.Load(ctx, LoadOptions{MaxLoadBytes: 8 << 20}); err != nil || snap.Version != 1 {
		t.Errorf("Load with its own 8 MiB budget: %v", err)
	}
	if _, _, err := NewTable(mb, "t").Refresh(ctx, prev, LoadOptions{}); err != nil {
		t.Errorf("Refresh with the default budget: %v", err)
	}
}
