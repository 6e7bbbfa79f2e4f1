package sync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/register"
)

// TestRegisterShards: two shard processes discovering the same directories
// register only the names each owns, so between them every table is
// created once, none twice, and neither reports (or counts against its
// cap) the other's tables. Before, each shard registered every table and
// the slower one met "already exists" on half of them.
func TestRegisterShards(t *testing.T) {
	testenv.Suite(t)
	e := newEnv(t)
	e.addSchema("ops")
	root := filepath.Join(t.TempDir(), "lake")
	const n = 12
	for i := range n {
		copyLog(t, "delta-0.8.0", filepath.Join(root, "ops", fmt.Sprintf("t%02d", i)), -1)
	}
	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: e.catalog + ".{schema}.{table}"}
	ctx := context.Background()
	created := 0
	seen := map[string]int{}
	for i := range 2 {
		shard := sync.Shard{Index: i, Count: 2}
		c := newRegisterCounter()
		rep := e.registering(c, rule, func(o *sync.Options) { o.Shard = shard }).Sync(ctx)
		for _, res := range rep.Results {
			if !shard.Owns(res.Table) {
				t.Errorf("shard %s reported %s (%s), another shard's table", shard, res.Table, res.Outcome)
				continue
			}
			if res.Outcome != sync.OutcomeRegistered {
				t.Errorf("shard %s: %s %s (%s), want registered", shard, res.Table, res.Outcome, res.Reason)
			}
			seen[res.Table]++
		}
		created += c.writes()["createTable"]
	}
	if created != n || len(seen) != n {
		t.Fatalf("the shards created %d tables and reported %d, want %d each: %v", created, len(seen), n, seen)
	}
	// Both shards had tables (FNV of these names splits them), so the
	// test is not passing on one shard doing everything.
	per := map[int]int{}
	for name := range seen {
		per[sync.ShardOf(name, 2)]++
	}
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("names fell on one shard only: %v", per)
	}
	// An unsharded process finds every table registered, in sync.
	c := newRegisterCounter()
	rep := e.registering(c, rule).Sync(ctx)
	for _, res := range rep.Results {
		if res.Outcome != sync.OutcomeUnchanged {
			t.Errorf("after both shards: %s %s (%s), want unchanged", res.Table, res.Outcome, res.Reason)
		}
	}
	if w := c.writes(); len(w) != 0 {
		t.Errorf("after both shards the unsharded cycle wrote %v", w)
	}
}

// TestRegisterEventShards: an event at a table root registers it only on the
// shard that owns the name it maps to; the other shards let it pass, as
// their discovery does.
func TestRegisterEventShards(t *testing.T) {
	e := uctestEnv(t)
	l := newLake(t)
	e.allowLake(l)
	ctx := context.Background()
	for i := range 6 {
		l.seed("delta-0.8.0", fmt.Sprintf("t%d", i), -1)
	}
	rule := register.Rule{Location: "s3://lake/w/{table}", Name: e.catalog + "." + e.schema + ".{table}"}
	owned := map[int]int{}
	for i := range 6 {
		root := fmt.Sprintf("s3://lake/w/t%d", i)
		name := e.name(fmt.Sprintf("t%d", i)).String()
		for s := range 2 {
			shard := sync.Shard{Index: s, Count: 2}
			r := e.reconciler(nil, func(o *sync.Options) {
				o.Register = &register.Options{Rules: []register.Rule{rule}}
				o.Shard = shard
			})
			_, ok := r.RegisterCandidate(root)
			res, decided := r.RegisterAt(ctx, root)
			if want := shard.Owns(name); ok != want || decided != want {
				t.Errorf("shard %s, event at %s (%s): candidate %v, decided %v (%s); want %v", shard, root, name, ok, decided, res.Outcome, want)
			}
			if decided {
				owned[s]++
				if res.Outcome != sync.OutcomeRegistered {
					t.Errorf("shard %s registered %s: %s (%s)", shard, name, res.Outcome, res.Reason)
				}
			}
		}
	}
	if owned[0]+owned[1] != 6 || owned[0] == 0 || owned[1] == 0 {
		t.Errorf("registrations per shard %v; want 6 in all, on both", owned)
	}
}
