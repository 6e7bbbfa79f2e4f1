package hms

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
)

// Change computes the new record from the one just read: (nil, nil) means
// nothing to write. It is called again on every attempt, with the fresh
// record, so a conflict is re-planned, not replayed.
type Change func(stored *Table) (*hm.Table, error)

// UpdateOptions bound Update.
type UpdateOptions struct {
	// Attempts is how many read-plan-write rounds a conflict may cost (3).
	Attempts int
	// LockWait is how long the HMS 3 path waits for the table lock (10s).
	LockWait time.Duration
	// Now is the clock for the guard's new value (time.Now).
	Now func() time.Time
	// AlsoLock takes the EXCLUSIVE table lock on HMS 4 too, around the
	// guarded write: two more calls per write, and then writers that lock
	// but send transient_lastDdlTime back unchanged (Trino's metadata
	// writes) are excluded as well.
	AlsoLock bool
}

// UpdateResult says what Update did.
type UpdateResult struct {
	Written   bool
	Attempts  int    // rounds taken (1 without conflicts)
	Conflicts int    // failed guards re-planned
	Guard     string // "expected-parameter" (HMS 4) or "lock" (HMS 3)
	Table     *Table // the record as last read (before the write)
}

// Update is one guarded read-modify-write of db.table.
//
// HMS 4 (the alter's expected-parameter guard): the guard writeGuard
// gives — delta.lastUpdateVersion as read whenever the record has it, so a
// writer that moved the version since the read fails it and no write
// lowers the version; transient_lastDdlTime only on a first write (a
// table Spark registered has no version, and HMS 4 fails an expectation
// on an absent key). Each round reads the table twice and plans only from
// a record that read the same both times (see stillAsRead: HMS can return
// a torn read, and a writer that leaves the version alone is detected
// only there), and sets transient_lastDdlTime to max(now, read+1)
// seconds, so that every later reader sees that the record changed. A
// failed guard is re-read and re-planned, at most Attempts times, then
// ErrConflict. What is not detected is WriteFrom's list.
//
// HMS 3 (guard ignored): an EXCLUSIVE table lock around read, plan and
// write, as Trino does; it excludes other lockers only.
func (c *Client) Update(ctx context.Context, db, table string, change Change, o UpdateOptions) (res UpdateResult, err error) {
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.LockWait <= 0 {
		o.LockWait = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	guarded, err := c.HasExpectedParameterGuard(ctx)
	if err != nil {
		return UpdateResult{}, err
	}
	if !guarded {
		return c.updateLocked(ctx, db, table, change, o)
	}
	res = UpdateResult{Guard: "expected-parameter"}
	if o.AlsoLock {
		res.Guard = "expected-parameter+lock"
		l, err := c.LockTable(ctx, db, table, o.LockWait)
		if err != nil {
			return res, err
		}
		defer func() {
			if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil && err == nil {
				err = uerr
			}
		}()
	}
	for res.Attempts < o.Attempts {
		res.Attempts++
		stored, err := c.GetTable(ctx, db, table)
		if err != nil {
			return res, err
		}
		res.Table = stored
		if err := c.stillAsRead(ctx, stored); err != nil {
			if !errors.Is(err, ErrConflict) {
				return res, err
			}
			res.Conflicts++ // changed while read, or a torn read: read again
			continue
		}
		next, err := change(stored)
		if err != nil || next == nil {
			return res, err
		}
		g, ok := writeGuard(stored.Thrift)
		if !ok {
			// Not seen on a real server: write under the lock rather than
			// unguarded (taken here unless AlsoLock holds it already).
			if o.AlsoLock {
				return c.alterLocked(ctx, stored, change, res)
			}
			return c.updateLocked(ctx, db, table, change, o)
		}
		next.Parameters[KeyDDLTime] = nextDDLTime(stored.Thrift.Parameters[KeyDDLTime], o.Now())
		err = c.AlterTable(ctx, stored, next, g)
		if err == nil {
			res.Written = true
			return res, nil
		}
		if !errors.Is(err, ErrConflict) {
			return res, err
		}
		res.Conflicts++
	}
	return res, &Error{Op: "update", Table: c.name(db, table), Err: fmt.Errorf("%w: still conflicting after %d attempts", ErrConflict, res.Attempts)}
}

// nextDDLTime is the guard's new value: now in seconds, but always past
// the value read, so two writes within a second still differ.
func nextDDLTime(read string, now time.Time) string {
	n := now.Unix()
	if r, err := strconv.ParseInt(read, 10, 64); err == nil && r >= n {
		n = r + 1
	}
	return strconv.FormatInt(n, 10)
}

func (c *Client) updateLocked(ctx context.Context, db, table string, change Change, o UpdateOptions) (res UpdateResult, err error) {
	res = UpdateResult{Guard: "lock", Attempts: 1}
	l, err := c.LockTable(ctx, db, table, o.LockWait)
	if err != nil {
		return res, err
	}
	defer func() {
		if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil && err == nil {
			err = uerr
		}
	}()
	stored, err := c.GetTable(ctx, db, table)
	if err != nil {
		return res, err
	}
	return c.alterLocked(ctx, stored, change, res)
}

// alterLocked plans and writes stored unguarded: the caller holds the lock.
func (c *Client) alterLocked(ctx context.Context, stored *Table, change Change, res UpdateResult) (UpdateResult, error) {
	res.Table = stored
	next, err := change(stored)
	if err != nil || next == nil {
		return res, err
	}
	if err := c.AlterTable(ctx, stored, next, Guard{}); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}
