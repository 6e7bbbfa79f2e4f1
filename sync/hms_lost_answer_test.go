package sync_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// thriftCutter is a TCP proxy in front of a metastore that, when armed,
// breaks the next alter_table call: before it reaches the server, or
// after the server applied it, before its answer comes back.
type thriftCutter struct {
	t        *testing.T
	ln       net.Listener
	upstream string

	mu    gosync.Mutex
	armed lossKind // cutBefore or cutAfter; 0: pass everything
	cuts  int
}

func newThriftCutter(t *testing.T, url string) *thriftCutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &thriftCutter{t: t, ln: ln, upstream: strings.TrimPrefix(url, "thrift://")}
	t.Cleanup(func() { _ = ln.Close() })
	go c.serve()
	return c
}

func (c *thriftCutter) url() string { return "thrift://" + c.ln.Addr().String() }

func (c *thriftCutter) arm(k lossKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = k
}

func (c *thriftCutter) cutCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cuts
}

// take disarms the cutter if a chunk of a request carries an alter.
func (c *thriftCutter) take(chunk []byte) lossKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed == 0 || !bytes.Contains(chunk, []byte("alter_table")) {
		return 0
	}
	k := c.armed
	c.armed = 0
	c.cuts++
	return k
}

func (c *thriftCutter) serve() {
	for {
		down, err := c.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", c.upstream)
		if err != nil {
			_ = down.Close()
			continue
		}
		var cutReply gosync.Once
		replyCut := make(chan struct{})
		closeBoth := func() { _ = down.Close(); _ = up.Close() }
		go func() { // client → server
			buf := make([]byte, 64<<10)
			for {
				n, err := down.Read(buf)
				if n > 0 {
					switch c.take(buf[:n]) {
					case cutBefore:
						closeBoth()
						return
					case cutAfter:
						cutReply.Do(func() { close(replyCut) })
					}
					if _, werr := up.Write(buf[:n]); werr != nil {
						closeBoth()
						return
					}
				}
				if err != nil {
					closeBoth()
					return
				}
			}
		}()
		go func() { // server → client
			buf := make([]byte, 64<<10)
			for {
				n, err := up.Read(buf)
				select {
				case <-replyCut: // the server answered the alter: it is applied
					closeBoth()
					return
				default:
				}
				if n > 0 {
					if _, werr := down.Write(buf[:n]); werr != nil {
						closeBoth()
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						closeBoth()
					}
					_ = down.Close()
					return
				}
			}
		}()
	}
}

// TestHMSLostAnswerResolved: on a Hive Metastore (the fakes, and the real
// HMS 4.0.1 and 3.1.3 when set), an alter whose answer is cut after the
// server applied it is audited synced, with the record's
// transient_lastDdlTime as read by another client as its etag_after, and
// the table is reported synced; one cut before it reached the server is
// audited not_applied, the record unchanged. Before, both were audited
// failed, with no etag_after.
func TestHMSLostAnswerResolved(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		ctx := context.Background()
		dir, loc := logTable(t, "deletion_vectors_disabled", "lost", -1)
		e.sparkRegister("lost", loc)
		cutter := newThriftCutter(t, e.url)
		proxied, err := hms.New(cutter.url(), hms.Options{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = proxied.Close() })
		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		aw, err := audit.Open(audit.Options{Path: auditPath})
		if err != nil {
			t.Fatal(err)
		}
		r := e.reconciler(func(o *sync.Options) {
			o.Catalog = hms.NewKind(proxied, hms.KindOptions{LockWait: 2 * time.Second})
			o.Audit = change.AuditOptions{Writer: aw, Command: "run", Version: "test"}
			o.Backoff = sync.Backoff{Initial: time.Nanosecond, Max: time.Nanosecond}
		})
		table := "hive." + e.db + ".lost"

		// The answer cut after the alter was applied.
		before := e.stored("lost").Parameters[hms.KeyDDLTime]
		cutter.arm(cutAfter)
		res := resultOf(t, r.Sync(ctx), table)
		if cutter.cutCount() != 1 {
			t.Fatalf("the cutter cut %d alters, want 1", cutter.cutCount())
		}
		after := e.stored("lost").Parameters[hms.KeyDDLTime]
		if e.stored("lost").Parameters[hms.KeyLastUpdateVersion] == "" {
			t.Fatal("the alter did not reach the metastore")
		}
		if res.Outcome != sync.OutcomeSynced {
			t.Errorf("cut after apply: %s %s, want synced (the record holds the write)", res.Outcome, res.Reason)
		}
		recs := readAudit(t, auditPath)
		if len(recs) != 1 || recs[0]["outcome"] != "synced" || recs[0]["etag_before"] != before || recs[0]["etag_after"] != after {
			t.Fatalf("cut after apply: audit %v; want one synced record %s → %s", recs, before, after)
		}

		// A new commit; the alter writing it cut before the metastore saw it.
		writeCommit(t, dir, snapshot(t, dir).Version+1)
		cutter.arm(cutBefore)
		res = resultOf(t, r.Sync(ctx), table)
		if cutter.cutCount() != 2 {
			t.Fatalf("the cutter cut %d alters, want 2", cutter.cutCount())
		}
		if got := e.stored("lost").Parameters[hms.KeyDDLTime]; got != after {
			t.Fatalf("the alter cut before the metastore moved %s: %s → %s", hms.KeyDDLTime, after, got)
		}
		if res.Outcome != sync.OutcomeFailed {
			t.Errorf("cut before: %s, want failed (retried next cycle)", res.Outcome)
		}
		recs = readAudit(t, auditPath)
		if len(recs) != 2 || recs[1]["outcome"] != "not_applied" || recs[1]["etag_before"] != after || recs[1]["etag_after"] != nil {
			t.Fatalf("cut before: audit %v; want a second record not_applied from %s", recs, after)
		}
		_ = aw.Close()
	})
}
