package hms

import (
	"context"
	"errors"
	"fmt"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
)

// Lock is a held EXCLUSIVE table lock (no transaction), the guard for a
// read-modify-write on HMS 3.x, which ignores the alter's expectation. It
// excludes other lockers only: Trino takes this lock for its HMS writes,
// Spark and plain Thrift clients do not. HMS expires a lock that is not
// heartbeated within metastore.txn.timeout (300 s by default): hold it for
// one read-modify-write, not longer.
type Lock struct {
	c     *Client
	id    int64
	table string
}

// ID is the server's lock id.
func (l *Lock) ID() int64 { return l.id }

// LockTable takes an EXCLUSIVE lock on db.table, waiting up to wait while
// another holder has it (check_lock polls, 50 ms doubling to 1 s). On
// timeout the waiting request is withdrawn and ErrLockTimeout returned.
func (c *Client) LockTable(ctx context.Context, db, table string, wait time.Duration) (*Lock, error) {
	name := c.name(db, table)
	comp := hm.NewLockComponent()
	comp.Type, comp.Level, comp.Dbname, comp.Tablename = hm.LockType_EXCLUSIVE, hm.LockLevel_TABLE, db, &table
	comp.OperationType = hm.DataOperationType_NO_TXN
	req := hm.NewLockRequest()
	req.Component = []*hm.LockComponent{comp}
	req.User, req.Hostname, req.AgentInfo = c.opts.User, c.opts.Hostname, "deltasync"
	var res *hm.LockResponse
	if _, err := c.call(ctx, "lock", name, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		var err error
		res, err = ms.Lock(ctx, req)
		return err
	}); err != nil {
		return nil, err
	}
	l := &Lock{c: c, id: res.Lockid, table: name}
	deadline := time.Now().Add(wait)
	pause := 50 * time.Millisecond
	for {
		switch res.State {
		case hm.LockState_ACQUIRED:
			return l, nil
		case hm.LockState_WAITING:
		default:
			return nil, &Error{Op: "lock", Table: name, Err: fmt.Errorf("lock %d is %s", l.id, res.State)}
		}
		if time.Now().Add(pause).After(deadline) {
			err := fmt.Errorf("%w: lock %d still WAITING after %s", ErrLockTimeout, l.id, wait)
			if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return nil, &Error{Op: "lock", Table: name, Err: err}
		}
		select {
		case <-ctx.Done():
			err := ctx.Err()
			if uerr := l.Unlock(context.WithoutCancel(ctx)); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return nil, &Error{Op: "lock", Table: name, Err: err}
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
		check := hm.NewCheckLockRequest()
		check.Lockid = l.id
		if _, err := c.call(ctx, "check_lock", name, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
			var err error
			res, err = ms.CheckLock(ctx, check)
			return err
		}); err != nil {
			_ = l.Unlock(context.WithoutCancel(ctx))
			return nil, err
		}
	}
}

// Unlock releases the lock (or withdraws a waiting request).
func (l *Lock) Unlock(ctx context.Context) error {
	req := hm.NewUnlockRequest()
	req.Lockid = l.id
	_, err := l.c.call(ctx, "unlock", l.table, func(ctx context.Context, ms *hm.ThriftHiveMetastoreClient) error {
		return ms.Unlock(ctx, req)
	})
	return err
}
