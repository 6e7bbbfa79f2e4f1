package sync

import (
	"strings"
	"testing"
)

func TestShard(t *testing.T) {
	const n = 4
	const pinnedShard = 5
	names := []string{"main.sales.orders", "main.sales.customers", "a.b.c", "x.y.z", "q.r.s"}
	for _, name := range names {
		owners := 0
		for i := 0; i < n; i++ {
			if (Shard{Index: i, Count: n}).Owns(name) {
				owners++
			}
		}
		if owners != 1 {
			t.Errorf("%s owned by %d shards, want exactly 1", name, owners)
		}
		if ShardOf(name, n) != ShardOf(strings.ToUpper(name), n) {
			t.Errorf("%s: shard depends on case", name)
		}
	}
	// Pinned values: the hash must never change between releases.
	if got := ShardOf("main.sales.orders", 7); got != pinnedShard {
		t.Errorf("ShardOf(main.sales.orders, 7) = %d, want %d", got, pinnedShard)
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"", Shard{}, false},
		{"0/1", Shard{0, 1}, false},
		{"2/3", Shard{2, 3}, false},
		{"3/3", Shard{}, true},
		{"-1/3", Shard{}, true},
		{"1", Shard{}, true},
		{"a/b", Shard{}, true},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v", tt.in, got, err)
		}
	}
}
