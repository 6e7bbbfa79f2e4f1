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
// this client read earlier, in a batch or by GetTable), with no re-read
// and no retry of its own: a caller that plans from its own read (sync's
// reconcile) reloads and re-plans itself on ErrConflict, so what it
// decides from (policy, held changes, a table now in sync) is decided
// again on the fresh record.
//
//   - HMS ≥ 4: the table read again (stillAsRead: a record that changed
//     since read, or a torn read, is a conflict), then the alter's
//     expectation that transient_lastDdlTime is still read's value; next
//     carries max(now, read+1) seconds as its new value. Any writer that
//     moved the key since read is a conflict.
//   - HMS 3.x (the expectation is ignored): an EXCLUSIVE table lock, a
//     re-read under it, and a conflict unless the re-read's
//     transient_lastDdlTime is still read's; then the alter, unguarded,
//     under the lock. A writer that waited for the lock is excluded; a
//     Hive-client writer that did not lock but moved the key before the
//     lock was taken is detected.
//
// A lock that stays WAITING past lockWait is ErrConflict too (another
// locker holds the table). It returns the guard's new value of
// transient_lastDdlTime (HMS 4; "" on HMS 3, where the server sets it).
func (c *Client) WriteFrom(ctx context.Context, read *Table, next *hm.Table, now time.Time, lockWait time.Duration) (ddlTime string, err error) {
	db, table := read.Thrift.DbName, read.Thrift.TableName
	expected, has := read.Thrift.Parameters[KeyDDLTime]
	guarded, err := c.HasExpectedParameterGuard(ctx)
	if err != nil {
		return "", err
	}
	if guarded && has {
		if err := c.stillAsRead(ctx, read); err != nil {
			return "", err
		}
		next.Parameters[KeyDDLTime] = nextDDLTime(expected, now)
		return next.Parameters[KeyDDLTime], c.AlterTable(ctx, read, next, Guard{Key: KeyDDLTime, Expected: expected})
	}
	if lockWait <= 0 {
		lockWait = 10 * time.Second
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
