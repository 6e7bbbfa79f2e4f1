package hms

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
)

// WriteFrom is one guarded write of next, planned from read (a record
// this client read earlier, in a batch or by GetTable), with no retry of
// its own: a caller that plans from its own read (sync's reconcile)
// reloads and re-plans itself on ErrConflict, so what it decides from
// (policy, held changes, a table now in sync) is decided again on the
// fresh record.
//
//   - HMS ≥ 4: the table read again (stillAsRead: a record that changed
//     since read, or a torn read, is a conflict), then the alter with the
//     expectation writeGuard gives: delta.lastUpdateVersion still read's
//     value whenever read has one (next carries the log's version), so a
//     writer that moved the version at any time before the alter commits —
//     one that sends transient_lastDdlTime back as read too — is a
//     conflict, and no write lowers the version; transient_lastDdlTime for
//     a first write (no version yet). next carries max(now, read+1) seconds
//     as transient_lastDdlTime either way, so every later reader (another
//     deltasync's re-read, a first write's guard) sees that deltasync wrote.
//     A write that does not move the version (a catalog-side edit undone
//     at the same log version) expects the value it writes, which HMS
//     4.0.1 accepts and which still refuses a writer that moved the
//     version. Against a writer that leaves the version alone, such a
//     write — any write on a versioned record — is guarded by the re-read
//     alone: anything committed before it is a conflict, a writer
//     committing between it and the alter (milliseconds) is replaced. The
//     expectation is one key, and the version is the key that must never
//     go back; the table lock would exclude deltasync's own writers too,
//     but HMS 4.0.1 over Derby deadlocks under a few concurrent lockers
//     (its TxnHandler's checkLock/unlock), so it is not taken (Update's
//     AlsoLock takes it).
//   - HMS 3.x (the expectation is ignored): an EXCLUSIVE table lock (a
//     lock that stays WAITING past lockWait is ErrConflict: another locker
//     holds the table), a re-read under it and a conflict unless it is as
//     read, then the alter, unguarded, under the lock. A writer that
//     waited for the lock is excluded; one that landed before the re-read
//     is detected whatever it changed; a lockless writer landing between
//     the re-read and the alter cannot be detected by any client on 3.x:
//     its edit is replaced.
//
// It returns the new value of transient_lastDdlTime (HMS 4; "" on HMS 3,
// where the server sets it).
func (c *Client) WriteFrom(ctx context.Context, read *Table, next *hm.Table, now time.Time, lockWait time.Duration) (ddlTime string, err error) {
	db, table := read.Thrift.DbName, read.Thrift.TableName
	guarded, err := c.HasExpectedParameterGuard(ctx)
	if err != nil {
		return "", err
	}
	if lockWait <= 0 {
		lockWait = 10 * time.Second
	}
	if g, ok := writeGuard(read.Thrift); guarded && ok {
		if err := c.stillAsRead(ctx, read); err != nil {
			return "", err
		}
		next.Parameters[KeyDDLTime] = nextDDLTime(read.Thrift.Parameters[KeyDDLTime], now)
		return next.Parameters[KeyDDLTime], c.AlterTable(ctx, read, next, g)
	}
	l, err := c.LockTable(ctx, db, table, lockWait)
	if err != nil {
		if errors.Is(err, ErrLockTimeout) {
			return "", &Error{Op: "lock", Table: c.name(db, table), Err: fmt.Errorf("%w: %w", ErrConflict, err)}
		}
		return "", err
	}
	defer func() {
		if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil && err == nil {
			err = uerr
		}
	}()
	expected := read.Thrift.Parameters[KeyDDLTime]
	fresh, err := c.GetTable(ctx, db, table)
	if err != nil {
		return "", err
	}
	if now := fresh.Thrift.Parameters[KeyDDLTime]; now != expected {
		return "", &Error{Op: "alter_table_with_environment_context", Table: c.name(db, table),
			Err: fmt.Errorf("%w: %s is %q under the lock, %q when read", ErrConflict, KeyDDLTime, now, expected)}
	}
	// The key has one-second resolution: a writer in the same second as
	// read's leaves it as it was. What such a writer changed shows in the
	// record itself.
	if what := changedSince(read.Thrift, fresh.Thrift); what != "" {
		return "", &Error{Op: "alter_table_with_environment_context", Table: c.name(db, table),
			Err: fmt.Errorf("%w: %s changed between the read and the lock (%s unchanged: a write in the same second)", ErrConflict, what, KeyDDLTime)}
	}
	// The server sets the key itself on an alter that omits it.
	delete(next.Parameters, KeyDDLTime)
	return "", c.AlterTable(ctx, fresh, next, Guard{})
}

// WriteChecked is WriteFrom for a write planned from a record read
// earlier, perhaps by another process (a saved plan): check decides on a
// read whether it is still the record planned from (its error, a
// conflict, ends the write), and next is the record to write, made from
// that read. On HMS 4 the record is read once, where WriteFrom reads it
// again just before the alter: a read that check finds to be the record
// planned from is two reads that agree, which is what WriteFrom's second
// read establishes (a torn read differs from a whole one), so one read
// serves both; the guard is WriteFrom's (the watermark, or
// transient_lastDdlTime for a first write). On HMS 3 (and a record with
// neither key) the record is read and checked under the table lock, as
// WriteFrom reads it: no read is added between the plan's read and the
// lock, the window a concurrent writer must miss for the write to go
// through (TestHMSRace, four plain writers against four reconcilers, saw
// deltasync lose every attempt under -race with a read before the lock).
func (c *Client) WriteChecked(ctx context.Context, db, table string, check func(*Table) error, next func(*Table) *hm.Table, now time.Time, lockWait time.Duration) (ddlTime string, err error) {
	guarded, err := c.HasExpectedParameterGuard(ctx)
	if err != nil {
		return "", err
	}
	if lockWait <= 0 {
		lockWait = 10 * time.Second
	}
	if guarded {
		cur, err := c.GetTable(ctx, db, table)
		if err != nil {
			return "", err
		}
		if err := check(cur); err != nil {
			return "", err
		}
		if g, ok := writeGuard(cur.Thrift); ok {
			nx := next(cur)
			nx.Parameters[KeyDDLTime] = nextDDLTime(cur.Thrift.Parameters[KeyDDLTime], now)
			return nx.Parameters[KeyDDLTime], c.AlterTable(ctx, cur, nx, g)
		}
	}
	l, err := c.LockTable(ctx, db, table, lockWait)
	if err != nil {
		if errors.Is(err, ErrLockTimeout) {
			return "", &Error{Op: "lock", Table: c.name(db, table), Err: fmt.Errorf("%w: %w", ErrConflict, err)}
		}
		return "", err
	}
	defer func() {
		if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil && err == nil {
			err = uerr
		}
	}()
	fresh, err := c.GetTable(ctx, db, table)
	if err != nil {
		return "", err
	}
	if err := check(fresh); err != nil {
		return "", err
	}
	nx := next(fresh)
	// The server sets the key itself on an alter that omits it.
	delete(nx.Parameters, KeyDDLTime)
	return "", c.AlterTable(ctx, fresh, nx, Guard{})
}

// stillAsRead reads the table again and fails with ErrConflict unless it
// is as read. On HMS 4 the guard alone is not enough: a read that overlaps
// another client's alter can return that alter's new
// transient_lastDdlTime with its other parameters not yet there (a torn
// read; seen on HMS 4.0.1 over Derby, whose READ COMMITTED is lock-based,
// not a snapshot), and a write planned from it passes the guard and drops
// the other client's edit. The other alter has committed once such a read
// returns, so a second read shows it whole: a record that reads the same
// twice in a row was not torn by one writer, and one torn by another
// writer shows a different transient_lastDdlTime.
func (c *Client) stillAsRead(ctx context.Context, read *Table) error {
	db, table := read.Thrift.DbName, read.Thrift.TableName
	fresh, err := c.GetTable(ctx, db, table)
	if err != nil {
		return err
	}
	if what := changedSince(read.Thrift, fresh.Thrift); what != "" {
		return &Error{Op: "alter_table_with_environment_context", Table: c.name(db, table),
			Err: fmt.Errorf("%w: %s changed since the table was read", ErrConflict, what)}
	}
	return nil
}

// changedSince names what another writer may change in a table that
// differs between two reads of it ("" when nothing does): its parameters,
// owner, type, storage descriptor and partition keys.
func changedSince(read, fresh *hm.Table) string {
	switch {
	case !maps.Equal(read.Parameters, fresh.Parameters):
		return "the parameters"
	case read.Owner != fresh.Owner || read.TableType != fresh.TableType:
		return "the owner or table type"
	case !reflect.DeepEqual(read.Sd, fresh.Sd):
		return "the storage descriptor"
	case !reflect.DeepEqual(read.PartitionKeys, fresh.PartitionKeys):
		return "the partition keys"
	}
	return ""
}

// writeGuard is the expectation a write planned from read carries on
// HMS 4: delta.lastUpdateVersion as read whenever read has it — the write
// carries the log's version as the key's new value, so any writer that
// moved the version since (Delta's catalog hook, a raw Thrift client,
// another deltasync) fails it and no write lowers the version — and
// transient_lastDdlTime only for a first write (read has no version: HMS 4
// fails any expectation on an absent key). ok is false when read has
// neither (not seen on a real server).
func writeGuard(read *hm.Table) (g Guard, ok bool) {
	if v, has := read.Parameters[KeyLastUpdateVersion]; has {
		return Guard{Key: KeyLastUpdateVersion, Expected: v}, true
	}
	if v, has := read.Parameters[KeyDDLTime]; has {
		return Guard{Key: KeyDDLTime, Expected: v}, true
	}
	return Guard{}, false
}
