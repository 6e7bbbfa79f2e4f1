package sync_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// TestHMSAuditIdentity: an HMS write's audit record names the record it
// wrote: table_id is hive.db.table@createTime (HMS has no uuid; a table
// dropped and created again is another), etag_before the
// transient_lastDdlTime the write was guarded by, and on HMS 4 etag_after
// the value the guarded write set, as stored afterwards (on HMS 3 the
// server sets it under the lock: "").
func TestHMSAuditIdentity(t *testing.T) {
	forEachHMS(t, func(t *testing.T, e *hmsEnv) {
		_, loc := logTable(t, "deletion_vectors_disabled", "ev", -1)
		e.sparkRegister("ev", loc)
		before := e.stored("ev")
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		aw, err := audit.Open(audit.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = aw.Close() })
		r := e.reconciler(func(o *sync.Options) { o.Audit = change.AuditOptions{Writer: aw, Command: "once", Version: "test"} })
		if res := resultOf(t, r.Sync(context.Background()), "hive."+e.db+".ev"); res.Outcome != sync.OutcomeSynced {
			t.Fatalf("%s %q", res.Outcome, res.Reason)
		} else if want := "hive." + e.db + ".ev@" + strconv.Itoa(int(before.CreateTime)); res.TableID != want || before.CreateTime == 0 {
			t.Errorf("report table_id %q, want %q", res.TableID, want)
		}
		after := e.stored("ev")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var recs []audit.Record
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var rec audit.Record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		if len(recs) != 1 {
			t.Fatalf("%d audit records, want 1: %+v", len(recs), recs)
		}
		rec := recs[0]
		wantAfter := after.Parameters[hms.KeyDDLTime]
		if v, _ := e.plain.Version(context.Background()); v == "3.0" {
			wantAfter = ""
		}
		if rec.TableID != "hive."+e.db+".ev@"+strconv.Itoa(int(before.CreateTime)) || rec.EtagBefore != before.Parameters[hms.KeyDDLTime] ||
			rec.EtagAfter == nil || *rec.EtagAfter != wantAfter || rec.Outcome != audit.OutcomeSynced {
			t.Errorf("audit record table_id %q etag %q → %v (%s), want %s@%d, %q → %q", rec.TableID, rec.EtagBefore, rec.EtagAfter, rec.Outcome,
				"hive."+e.db+".ev", before.CreateTime, before.Parameters[hms.KeyDDLTime], wantAfter)
		}
	})
}
