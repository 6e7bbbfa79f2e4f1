package hms

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	hm "github.com/beltran/gohive/hive_metastore"
	"github.com/deltasync/deltasync/internal/fakehms"
)

// The two-writer tests: deltasync's write is held by a Thrift proxy
// (fakehms.HoldProxy) at a chosen call while another client writes the
// record directly, then released. The other writer advances
// delta.lastUpdateVersion (4 → 5) and adds a key of its own, owner.team,
// the way one of two clients does:
//
//   - raw: a raw Thrift client (or Trino) sending transient_lastDdlTime
//     back as it read it, so the server keeps it;
//   - hive: Hive's own client (Spark, Delta's catalog hook), which strips
//     transient_lastDdlTime, so the server sets it.

// otherWriters are the two kinds of other writer.
var otherWriters = []struct {
	name    string
	keepDDL bool
}{{"raw", true}, {"hive", false}}

// otherWrite is the other writer's edit, made on its own connection:
// version 5 and owner.team.
func otherWrite(t *testing.T, c *Client, db, table string, keepDDL bool) {
	t.Helper()
	ctx := context.Background()
	s, err := c.GetTable(ctx, db, table)
	if err != nil {
		t.Error(err)
		return
	}
	n := cloneTable(s.Thrift)
	n.Parameters[KeyLastUpdateVersion] = "5"
	n.Parameters["owner.team"] = "data-eng"
	if !keepDDL {
		delete(n.Parameters, KeyDDLTime)
	}
	if err := c.AlterTable(ctx, s, n, Guard{}); err != nil {
		t.Error(err)
	}
}

// versioned registers a Spark table and brings it to version v (with
// delta.enableDeletionVectors=true), as a first sync would: the record
// deltasync then reads.
func versioned(t *testing.T, c *Client, v int64) (db string) {
	t.Helper()
	db, _ = sparkTable(t, c)
	if _, err := c.Update(context.Background(), db, "ev", func(s *Table) (*hm.Table, error) {
		return Apply(s.Thrift, atVersion(v))
	}, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// atVersion is the log's state at version v (one property, the protocol).
func atVersion(v int64) Desired {
	return Desired{Schema: `{"type":"struct","fields":[]}`, Version: v, CommitTimestamp: 1000 + v,
		Properties: map[string]string{"delta.enableDeletionVectors": "true", KeyMinReaderVersion: "1", KeyMinWriterVersion: "2"}}
}

// heldWrite runs write (deltasync's, through the proxy) in the background,
// holds its call named at, lets the other writer write, releases the call
// and returns write's error.
func heldWrite(t *testing.T, p *fakehms.HoldProxy, at string, other func(), write func() error) error {
	t.Helper()
	h := p.Hold(at)
	done := make(chan error, 1)
	go func() { done <- write() }()
	h.Wait(t)
	other()
	h.Release()
	return <-done
}

// TestTwoWriterWriteFromHMS4: on HMS 4 deltasync's write (WriteFrom, the
// reconcile's) is held at its alter while the other writer advances the
// record to version 5 — raw or Hive-style, and whether deltasync's write
// moves the version (3 → 4) or not (4 → 4, a removed property restored):
// the guard on delta.lastUpdateVersion refuses it, and the record keeps
// version 5 and owner.team. (On the old guard, transient_lastDdlTime, the
// raw writer's edit was replaced and the version went back to 4.)
func TestTwoWriterWriteFromHMS4(t *testing.T) {
	for _, ow := range otherWriters {
		for _, from := range []int64{3, 4} {
			t.Run(ow.name+"/from"+strconv.FormatInt(from, 10), func(t *testing.T) {
				direct := metastore(t, "DELTASYNC_HMS4_URL")
				db := versioned(t, direct, from)
				if from == 4 { // a catalog-side edit deltasync undoes at the same version
					edit(t, direct, db, func(p map[string]string) { delete(p, "delta.enableDeletionVectors") })
				}
				p := fakehms.NewHoldProxy(t, direct.addr)
				ds := clientAt(t, p.URL)
				ctx := context.Background()
				read, err := ds.GetTable(ctx, db, "ev")
				if err != nil {
					t.Fatal(err)
				}
				next, err := Apply(read.Thrift, atVersion(4))
				if err != nil {
					t.Fatal(err)
				}
				err = heldWrite(t, p, "alter_table_with_environment_context",
					func() { otherWrite(t, direct, db, "ev", ow.keepDDL) },
					func() error { _, err := ds.WriteFrom(ctx, read, next, time.Now(), 5*time.Second); return err })
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("deltasync's held write: %v, want ErrConflict (the guard on %s)", err, KeyLastUpdateVersion)
				}
				got := stored(t, direct, db)
				if got[KeyLastUpdateVersion] != "5" || got["owner.team"] != "data-eng" {
					t.Errorf("after the refused write: version %q, owner.team %q; want the other writer's 5 and data-eng", got[KeyLastUpdateVersion], got["owner.team"])
				}
			})
		}
	}
}

// TestTwoWriterUpdateHMS4: the same through Update: the held alter is
// refused, Update reads again and re-plans on the other writer's record
// (now at version 5, which the log has too), and writes only what still
// differs: the record ends at 5, owner.team kept, the log's property set.
func TestTwoWriterUpdateHMS4(t *testing.T) {
	for _, ow := range otherWriters {
		t.Run(ow.name, func(t *testing.T) {
			direct := metastore(t, "DELTASYNC_HMS4_URL")
			db := versioned(t, direct, 3)
			p := fakehms.NewHoldProxy(t, direct.addr)
			ds := clientAt(t, p.URL)
			var res UpdateResult
			err := heldWrite(t, p, "alter_table_with_environment_context",
				func() { otherWrite(t, direct, db, "ev", ow.keepDDL) },
				func() error {
					var err error
					res, err = ds.Update(context.Background(), db, "ev", func(s *Table) (*hm.Table, error) {
						r, err := ReadRecord(s.Thrift)
						if err != nil {
							return nil, err
						}
						return Apply(s.Thrift, atVersion(max(4, r.Version))) // the log has 5 too
					}, UpdateOptions{})
					return err
				})
			if err != nil || !res.Written || res.Conflicts != 1 {
				t.Fatalf("Update = %+v, %v; want written after 1 conflict", res, err)
			}
			got := stored(t, direct, db)
			if got[KeyLastUpdateVersion] != "5" || got["owner.team"] != "data-eng" || got["delta.enableDeletionVectors"] != "true" {
				t.Errorf("after Update: %v; want version 5, owner.team kept", got)
			}
		})
	}
}

// TestTwoWriterHMS3: HMS 3 has no server-side guard. Held where a guard
// can still act — deltasync's lock request, so the other writer lands
// before the re-read under the lock — the write is refused (WriteFrom) or
// re-planned on the fresh record (Update), and the other writer's version
// and key stay. Held at the alter itself, a lockless writer's edit cannot
// be seen by any client: deltasync's alter replaces it and the version
// goes back to 4. That is asserted here as what 3.x does, and documented.
func TestTwoWriterHMS3(t *testing.T) {
	for _, ow := range otherWriters {
		t.Run(ow.name, func(t *testing.T) {
			direct := metastore(t, "DELTASYNC_HMS3_URL")
			ctx := context.Background()
			db := versioned(t, direct, 3)
			p := fakehms.NewHoldProxy(t, direct.addr)
			ds := clientAt(t, p.URL)
			read, err := ds.GetTable(ctx, db, "ev")
			if err != nil {
				t.Fatal(err)
			}
			next, err := Apply(read.Thrift, atVersion(4))
			if err != nil {
				t.Fatal(err)
			}
			other := func() { otherWrite(t, direct, db, "ev", ow.keepDDL) }
			writeFrom := func() error { _, err := ds.WriteFrom(ctx, read, next, time.Now(), 5*time.Second); return err }
			if err := heldWrite(t, p, "lock", other, writeFrom); !errors.Is(err, ErrConflict) {
				t.Fatalf("WriteFrom held at its lock: %v, want ErrConflict (the re-read under the lock)", err)
			}
			if got := stored(t, direct, db); got[KeyLastUpdateVersion] != "5" || got["owner.team"] != "data-eng" {
				t.Errorf("after the refused write: %v", got)
			}

			// Update held at its lock plans on the fresh record.
			edit(t, direct, db, func(p map[string]string) { delete(p, "owner.team"); p[KeyLastUpdateVersion] = "3" })
			var res UpdateResult
			err = heldWrite(t, p, "lock", other, func() error {
				var err error
				res, err = ds.Update(ctx, db, "ev", func(s *Table) (*hm.Table, error) {
					r, err := ReadRecord(s.Thrift)
					if err != nil {
						return nil, err
					}
					return Apply(s.Thrift, atVersion(max(4, r.Version)))
				}, UpdateOptions{})
				return err
			})
			if err != nil || !res.Written {
				t.Fatalf("Update held at its lock = %+v, %v", res, err)
			}
			if got := stored(t, direct, db); got[KeyLastUpdateVersion] != "5" || got["owner.team"] != "data-eng" {
				t.Errorf("after Update: %v", got)
			}

			// Held at the alter: not detectable on 3.x.
			edit(t, direct, db, func(p map[string]string) { delete(p, "owner.team"); p[KeyLastUpdateVersion] = "3" })
			if read, err = ds.GetTable(ctx, db, "ev"); err != nil {
				t.Fatal(err)
			}
			if next, err = Apply(read.Thrift, atVersion(4)); err != nil {
				t.Fatal(err)
			}
			if err := heldWrite(t, p, "alter_table_with_environment_context", other, writeFrom); err != nil {
				t.Fatalf("WriteFrom held at its alter: %v", err)
			}
			got := stored(t, direct, db)
			if got[KeyLastUpdateVersion] != "4" || got["owner.team"] != "" {
				t.Errorf("a lockless writer inside the held alter on HMS 3 was detected after all (%v): update the package doc", got)
			}
		})
	}
}

// TestTwoWriterSameVersionHMS4 pins what guards a write that does not
// move the version (4 → 4, a removed property restored: the guard key's
// value stays the same). Another writer that leaves the version alone
// (owner.team only) and commits before deltasync's re-read is detected by
// that re-read (stillAsRead): held at the re-read, the write is refused.
// One that commits between the re-read and the alter — held at the alter —
// is not detected: the guard's key did not move, so its edit is replaced
// (and deltasync's write moved transient_lastDdlTime past it, so the next
// reader sees a newer record). A writer that moves the version in that
// window is refused: TestTwoWriterWriteFromHMS4.
func TestTwoWriterSameVersionHMS4(t *testing.T) {
	direct := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db := versioned(t, direct, 4)
	p := fakehms.NewHoldProxy(t, direct.addr)
	ds := clientAt(t, p.URL)
	write := func(at, team string) error {
		// The catalog-side edit deltasync undoes at version 4.
		edit(t, direct, db, func(p map[string]string) { delete(p, "delta.enableDeletionVectors") })
		read, err := ds.GetTable(ctx, db, "ev")
		if err != nil {
			t.Fatal(err)
		}
		next, err := Apply(read.Thrift, atVersion(4))
		if err != nil {
			t.Fatal(err)
		}
		return heldWrite(t, p, at,
			func() { edit(t, direct, db, func(p map[string]string) { p["owner.team"] = team }) },
			func() error { _, err := ds.WriteFrom(ctx, read, next, time.Now(), 5*time.Second); return err })
	}
	if err := write("get_table_req", "before-reread"); !errors.Is(err, ErrConflict) {
		t.Errorf("a same-version edit before the re-read: %v, want ErrConflict", err)
	}
	if got := stored(t, direct, db); got["owner.team"] != "before-reread" {
		t.Errorf("the edit before the re-read was lost: %v", got)
	}
	if err := write("alter_table_with_environment_context", "in-the-alter"); err != nil {
		t.Fatalf("a same-version edit inside the held alter: %v", err)
	}
	got := stored(t, direct, db)
	if got["owner.team"] != "before-reread" || got["delta.enableDeletionVectors"] != "true" || got[KeyLastUpdateVersion] != "4" {
		t.Errorf("a same-version edit inside the held alter: %v; want it replaced (not detectable by a guard on %s)", got, KeyLastUpdateVersion)
	}
}

// clientAt is a client for the metastore (or proxy) at url.
func clientAt(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(url, Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// stored reads db.ev's parameters.
func stored(t *testing.T, c *Client, db string) map[string]string {
	t.Helper()
	s, err := c.GetTable(context.Background(), db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	return s.Thrift.Parameters
}

// edit changes db.ev's parameters as Hive's client does (the server sets
// transient_lastDdlTime).
func edit(t *testing.T, c *Client, db string, f func(map[string]string)) {
	t.Helper()
	ctx := context.Background()
	s, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Error(err)
		return
	}
	n := cloneTable(s.Thrift)
	f(n.Parameters)
	delete(n.Parameters, KeyDDLTime)
	if err := c.AlterTable(ctx, s, n, Guard{}); err != nil {
		t.Error(err)
	}
}

// TestTwoWriterFirstWriteHMS4 pins the first write on a table Spark
// registered (no delta.lastUpdateVersion yet: HMS 4 fails any expectation
// on an absent key, so it expects transient_lastDdlTime). A raw writer
// that sets the version to 5 (sending transient_lastDdlTime back as read)
// before deltasync's re-read is detected there; one that does so while
// deltasync's alter is held is not — the expectation holds, and the
// record ends at deltasync's version 3: the one write that can lower a
// version, documented in the package.
func TestTwoWriterFirstWriteHMS4(t *testing.T) {
	direct := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	p := fakehms.NewHoldProxy(t, direct.addr)
	ds := clientAt(t, p.URL)
	for _, c := range []struct {
		at       string
		detected bool
	}{{"get_table_req", true}, {"alter_table_with_environment_context", false}} {
		db, _ := sparkTable(t, direct)
		read, err := ds.GetTable(ctx, db, "ev")
		if err != nil {
			t.Fatal(err)
		}
		next, err := Apply(read.Thrift, atVersion(3))
		if err != nil {
			t.Fatal(err)
		}
		err = heldWrite(t, p, c.at, func() { otherWrite(t, direct, db, "ev", true) },
			func() error { _, err := ds.WriteFrom(ctx, read, next, time.Now(), 5*time.Second); return err })
		got := stored(t, direct, db)
		switch {
		case c.detected && (!errors.Is(err, ErrConflict) || got[KeyLastUpdateVersion] != "5"):
			t.Errorf("held at %s: %v, version %q; want ErrConflict and the other writer's 5", c.at, err, got[KeyLastUpdateVersion])
		case !c.detected && (err != nil || got[KeyLastUpdateVersion] != "3" || got["owner.team"] != ""):
			t.Errorf("held at %s: %v, %v; want the raw writer's edit replaced (undetectable on a first write)", c.at, err, got)
		}
	}
}

// TestContractSameValueGuardHMS4: HMS 4.0.1 accepts an expectation whose
// new value is the value expected (the guard's UPDATE matches the row it
// leaves as it was): what a write that does not move the version sends.
// A stale expectation on the same key is still refused.
func TestContractSameValueGuardHMS4(t *testing.T) {
	c := metastore(t, "DELTASYNC_HMS4_URL")
	ctx := context.Background()
	db := versioned(t, c, 4)
	read, err := c.GetTable(ctx, db, "ev")
	if err != nil {
		t.Fatal(err)
	}
	next := cloneTable(read.Thrift)
	next.Parameters["same"] = "value"
	if err := c.AlterTable(ctx, read, next, Guard{Key: KeyLastUpdateVersion, Expected: "4"}); err != nil {
		t.Fatalf("expected 4, new value 4: %v", err)
	}
	if got := stored(t, c, db); got["same"] != "value" || got[KeyLastUpdateVersion] != "4" {
		t.Errorf("after the same-value guarded write: %v", got)
	}
	if err := c.AlterTable(ctx, read, next, Guard{Key: KeyLastUpdateVersion, Expected: "3"}); !errors.Is(err, ErrConflict) {
		t.Errorf("a stale expectation (3, stored 4): %v, want ErrConflict", err)
	}
}
