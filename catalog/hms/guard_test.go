package hms

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	stdsync "sync"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
)

// sparkTable registers a Spark-style table in a fresh database and reads it.
func sparkTable(t *testing.T, c *Client) (db string, stored *Table) {
	t.Helper()
	ctx := context.Background()
	db = freshDB(t, c)
	if err := c.CreateExternalTable(ctx, sparkRegistered(db, "ev", "file:/tmp/"+db+".db", "file://"+t.TempDir())); err != nil {
		t.Fatal(err)
	}
	stored, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if _, has := stored.Thrift.Parameters[KeyLastUpdateVersion]; has {
		t.Fatalf("fixture already has %s", KeyLastUpdateVersion)
	}
	return db, stored
}

// TestContractGuardHMS4 pins the server behaviour the HMS 4 write guard
// stands on, and the guard itself.
func TestContractGuardHMS4(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db, stored := sparkTable(t, c)

	// HMS 4 fails an expectation on a key the stored table lacks: so
	// delta.lastUpdateVersion cannot guard the first write on a table
	// Spark registered.
	next := cloneTable(stored.Thrift)
	next.Parameters[KeyLastUpdateVersion] = "0"
	err := c.AlterTable(ctx, stored, next, Guard{Key: KeyLastUpdateVersion, Expected: "0"})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("expectation on an absent key: %v, want ErrConflict", err)
	}
	t.Logf("absent key: %v", err)

	// A new value for the guard key is required.
	next = cloneTable(stored.Thrift)
	delete(next.Parameters, KeyDDLTime)
	if err := c.AlterTable(ctx, stored, next, Guard{Key: KeyDDLTime, Expected: stored.Thrift.Parameters[KeyDDLTime]}); err == nil || errors.Is(err, ErrConflict) {
		t.Errorf("guard without the key's new value: %v, want a client-side refusal", err)
	}

	// A client that omits transient_lastDdlTime (Hive's client strips it)
	// gets the server's "now"; one that sends it keeps it.
	before := time.Now().Unix()
	plain := cloneTable(stored.Thrift)
	delete(plain.Parameters, KeyDDLTime)
	plain.Parameters["owner_team"] = "a"
	if err := c.AlterTable(ctx, stored, plain, Guard{}); err != nil {
		t.Fatal(err)
	}
	afterPlain, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	ddl, _ := strconv.ParseInt(afterPlain.Thrift.Parameters[KeyDDLTime], 10, 64)
	if ddl < before-2 || ddl > time.Now().Unix()+2 {
		t.Errorf("an alter without %s got %d, want about now (%d)", KeyDDLTime, ddl, before)
	}

	// The first guarded write on the Spark-registered table (no
	// delta.lastUpdateVersion), with a stale read: rejected.
	next, err = Apply(stored.Thrift, Desired{Schema: `{"type":"struct","fields":[]}`, Version: 0, CommitTimestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	next.Parameters[KeyDDLTime] = nextDDLTime(stored.Thrift.Parameters[KeyDDLTime], time.Now())
	if stored.Thrift.Parameters[KeyDDLTime] == afterPlain.Thrift.Parameters[KeyDDLTime] {
		t.Log("the plain alter landed in the fixture's creation second: the stale read is undetectable (documented ABA); skipping that check")
	} else if err := c.AlterTable(ctx, stored, next, Guard{Key: KeyDDLTime, Expected: stored.Thrift.Parameters[KeyDDLTime]}); !errors.Is(err, ErrConflict) {
		t.Errorf("stale guarded write: %v, want ErrConflict", err)
	}

	// Update re-reads and re-plans: the first write lands on the fresh
	// record and keeps the other client's edit.
	res, err := c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) {
		return Apply(s.Thrift, Desired{Schema: `{"type":"struct","fields":[]}`, Version: 0, CommitTimestamp: 1})
	}, UpdateOptions{})
	if err != nil || !res.Written || res.Guard != "expected-parameter" {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	got, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if got.Thrift.Parameters[KeyLastUpdateVersion] != "0" || got.Thrift.Parameters["owner_team"] != "a" {
		t.Errorf("after the first write: %v", got.Thrift.Parameters)
	}
	if got.Thrift.Parameters[KeyDDLTime] == afterPlain.Thrift.Parameters[KeyDDLTime] {
		t.Errorf("deltasync's write left %s at %s: the next writer could not detect it", KeyDDLTime, got.Thrift.Parameters[KeyDDLTime])
	}

	// A conflict inside Update (another writer that moves the version,
	// as Delta's catalog hook does, between Update's re-read and its
	// write) is re-planned on the fresh record, and both edits stay. (One
	// that leaves the version alone there is not detected:
	// TestTwoWriterSameVersionHMS4.)
	calls := 0
	res, err = c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) {
		calls++
		if calls == 1 {
			other := cloneTable(s.Thrift)
			other.Parameters["other"] = "kept"
			other.Parameters[KeyLastUpdateVersion] = "1"
			delete(other.Parameters, KeyDDLTime)
			if err := c.AlterTable(ctx, s, other, Guard{}); err != nil {
				return nil, err
			}
		}
		return Apply(s.Thrift, Desired{Schema: `{"type":"struct","fields":[]}`, Version: 2, CommitTimestamp: 2})
	}, UpdateOptions{})
	if err != nil || res.Conflicts != 1 || res.Attempts != 2 {
		t.Fatalf("Update with a concurrent writer = %+v, %v; want 1 conflict, 2 attempts", res, err)
	}
	got, err = c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if got.Thrift.Parameters["other"] != "kept" || got.Thrift.Parameters[KeyLastUpdateVersion] != "2" {
		t.Errorf("lost update: %v", got.Thrift.Parameters)
	}
}

// TestContractRaceHMS4: 8 writers, each on its own connection, read the
// same record and write it guarded; exactly one wins each round.
func TestContractRaceHMS4(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	db, _ := sparkTable(t, c)
	const writers, rounds = 8, 5
	clients := make([]*Client, writers)
	for i := range clients {
		clients[i] = metastore(t, "DELTASYNC_HMS4_URL")
	}
	ctx := context.Background()
	for round := range rounds {
		var read, done stdsync.WaitGroup
		read.Add(writers)
		done.Add(writers)
		errs := make([]error, writers)
		for i, wc := range clients {
			go func() {
				defer done.Done()
				s, err := wc.GetTable(ctx, db, "ev")
				read.Done()
				if err != nil {
					errs[i] = err
					return
				}
				read.Wait() // everyone has read before anyone writes
				next := cloneTable(s.Thrift)
				next.Parameters["winner"] = fmt.Sprintf("r%d-w%d", round, i)
				next.Parameters[KeyDDLTime] = nextDDLTime(s.Thrift.Parameters[KeyDDLTime], time.Now())
				errs[i] = wc.AlterTable(ctx, s, next, Guard{Key: KeyDDLTime, Expected: s.Thrift.Parameters[KeyDDLTime]})
			}()
		}
		done.Wait()
		won, lost := 0, 0
		winner := ""
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				winner = fmt.Sprintf("r%d-w%d", round, i)
			case errors.Is(err, ErrConflict):
				lost++
			default:
				t.Errorf("round %d writer %d: %v", round, i, err)
			}
		}
		got, err := c.GetTable(ctx, db, "ev")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d won, %d conflicts", round, won, lost)
		if won != 1 || lost != writers-1 || got.Thrift.Parameters["winner"] != winner {
			t.Errorf("round %d: %d won, %d conflicts, stored winner %q (want exactly 1 winner, %s)", round, won, lost, got.Thrift.Parameters["winner"], winner)
		}
	}
}

// TestContractNoLostUpdate: 8 writers each add their own key through
// Update at once; every key survives — on HMS 4 by the guard (conflicts
// re-planned), on HMS 3 by the table lock.
func TestContractNoLostUpdate(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := metastore(t, s.env)
			db, _ := sparkTable(t, c)
			const writers = 8
			var wg stdsync.WaitGroup
			results := make([]UpdateResult, writers)
			errs := make([]error, writers)
			for i := range writers {
				wc := metastore(t, s.env)
				wg.Go(func() {
					results[i], errs[i] = wc.Update(context.Background(), db, "ev", func(st *Table) (*hm.Table, error) {
						n := cloneTable(st.Thrift)
						n.Parameters[fmt.Sprintf("writer.%d", i)] = "done"
						return n, nil
					}, UpdateOptions{Attempts: writers + 1, LockWait: 60 * time.Second})
				})
			}
			wg.Wait()
			conflicts := 0
			for i, err := range errs {
				if err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
				conflicts += results[i].Conflicts
			}
			got, err := c.GetTable(context.Background(), db, "ev")
			if err != nil {
				t.Fatal(err)
			}
			for i := range writers {
				if got.Thrift.Parameters[fmt.Sprintf("writer.%d", i)] != "done" {
					t.Errorf("writer %d's edit was lost: %v", i, got.Thrift.Parameters)
				}
			}
			t.Logf("%s: guard %s, %d conflicts re-planned", s.name, results[0].Guard, conflicts)
		})
	}
}

// TestContractHMS3 pins what HMS 3.1.3 does: the guard is ignored (a stale
// write wins), so the client refuses to send one; the EXCLUSIVE lock
// excludes a second locker until released.
func TestContractHMS3(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS3_URL")
	ctx := context.Background()
	db, stored := sparkTable(t, c)
	if ok, err := c.HasExpectedParameterGuard(ctx); err != nil || ok {
		t.Fatalf("HasExpectedParameterGuard on HMS 3 = %v, %v", ok, err)
	}
	next := cloneTable(stored.Thrift)
	next.Parameters[KeyDDLTime] = "1"
	if err := c.AlterTable(ctx, stored, next, Guard{Key: KeyDDLTime, Expected: "stale"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("guarded alter on HMS 3: %v, want ErrUnsupported (never sent unguarded)", err)
	}

	l, err := c.LockTable(ctx, db, "ev", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other := metastore(t, "DELTASYNC_HMS3_URL")
	if _, err := other.LockTable(ctx, db, "ev", 300*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Errorf("second lock while held: %v, want ErrLockTimeout", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := other.LockTable(ctx, db, "ev", 5*time.Second)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestContractLockHMS4: the same lock works on HMS 4 (no transaction).
func TestContractLockHMS4(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db, _ := sparkTable(t, c)
	l, err := c.LockTable(ctx, db, "ev", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LockTable(ctx, db, "ev", 200*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Errorf("second lock while held: %v, want ErrLockTimeout", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestContractHMS3IgnoresGuard is why the client never sends a guard to
// HMS 3: sent raw, a stale expectation is accepted and the stale write wins.
func TestContractHMS3IgnoresGuard(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS3_URL")
	ctx := context.Background()
	db, stored := sparkTable(t, c)
	next := cloneTable(stored.Thrift)
	next.Parameters[KeyDDLTime] = "1"
	next.Parameters["stale"] = "won"
	env := hm.NewEnvironmentContext()
	env.Properties = map[string]string{"expected_parameter_key": KeyDDLTime, "expected_parameter_value": "not-the-stored-value"}
	if _, err := c.call(ctx, "alter_table_with_environment_context", db+".ev", func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.AlterTableWithEnvironmentContext(ctx, db, "ev", next, env)
	}); err != nil {
		t.Fatalf("HMS 3 refused the stale guarded write (%v): it honours the guard after all", err)
	}
	got, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if got.Thrift.Parameters["stale"] != "won" {
		t.Errorf("stale write did not land: %v", got.Thrift.Parameters)
	}
}

// TestContractTrinoStyleWriterHMS4: a writer that sends
// transient_lastDdlTime back unchanged (as Trino's and raw Thrift clients'
// alters do) is not detected by the guard — its edit is lost, as the
// package says — unless it locks and deltasync locks too (AlsoLock).
func TestContractTrinoStyleWriterHMS4(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	other := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db, _ := sparkTable(t, c)
	trinoWrite := func(key string) {
		s, err := other.GetTable(ctx, db, "ev")
		if err != nil {
			t.Fatal(err)
		}
		n := cloneTable(s.Thrift)
		n.Parameters[key] = "1" // transient_lastDdlTime sent back as read
		if err := other.AlterTable(ctx, s, n, Guard{}); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(s *Table) (*hm.Table, error) {
		return Apply(s.Thrift, Desired{Schema: `{"type":"struct","fields":[]}`, Version: 0, CommitTimestamp: 1})
	}

	// Not detected: the edit lands between deltasync's read and write.
	first := true
	if _, err := c.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) {
		if first {
			first = false
			trinoWrite("trino.unlocked")
		}
		return plan(s)
	}, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := got.Thrift.Parameters["trino.unlocked"]; kept {
		t.Error("an edit that did not move transient_lastDdlTime was detected: the documented limitation no longer holds, update the docs")
	}

	// Detected with AlsoLock: the locking writer finishes first, and
	// deltasync plans on its result.
	l, err := other.LockTable(ctx, db, "ev", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Update(ctx, db, "ev", plan, UpdateOptions{AlsoLock: true, LockWait: 30 * time.Second})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	trinoWrite("trino.locked")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err = c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if got.Thrift.Parameters["trino.locked"] != "1" {
		t.Errorf("the locking writer's edit was lost under AlsoLock: %v", got.Thrift.Parameters)
	}
}
