package sync_test

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog/hms"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/internal/fakehms"
	"github.com/deltasync/deltasync/internal/testenv"
	"github.com/deltasync/deltasync/sync"
)

// twoWriterKind is one catalog kind under the two-writer test: a table
// registered and synced at the log's version 1, and the means to hold
// deltasync's write while another client writes the record.
type twoWriterKind interface {
	// reconciler is deltasync through a proxy that holds its first write
	// of the table and runs interfere (the other writer) while it is held.
	reconciler(interfere func()) *sync.Reconciler
	// drop removes a log property from the record (a catalog-side edit).
	drop(key string)
	// advance is the other client's write: the record's version set to v
	// and a property of its own, owner.team.
	advance(v int64)
	// state is the record's version (-1: none) and properties.
	state() (int64, map[string]string)
	name() string // the table's full name
}

// twoWriterKinds are the kinds the test body runs over: Unity Catalog
// (uctest, and the real server at DELTASYNC_UC_URL) and the Hive
// Metastore (the real 4.0.1 and 3.1.3), each with the table registered at
// version 1 of a corpus log copied to dir and synced once.
func twoWriterKinds() []struct {
	name string
	make func(t *testing.T, dir string, style string) twoWriterKind
	// styles are the other writer's kinds of write (HMS: raw Thrift
	// sending transient_lastDdlTime back as read, or Hive's client).
	styles []string
} {
	return []struct {
		name   string
		make   func(t *testing.T, dir string, style string) twoWriterKind
		styles []string
	}{
		{"uctest", func(t *testing.T, dir, _ string) twoWriterKind { return newUCTwoWriter(t, uctestEnv(t), dir) }, []string{"update"}},
		{"uc", func(t *testing.T, dir, _ string) twoWriterKind {
			url := testenv.Getenv(t, "DELTASYNC_UC_URL", testenv.UC, "DELTASYNC_UC_URL is unset: no real Unity Catalog server (.ci/setup-uc.sh)")
			return newUCTwoWriter(t, newEnvAt(t, url), dir)
		}, []string{"update"}},
		{"hms4", func(t *testing.T, dir, style string) twoWriterKind {
			return newHMSTwoWriter(t, newHMSEnv(t, "", "DELTASYNC_HMS4_URL"), dir, style, "alter_table_with_environment_context")
		}, []string{"raw", "hive"}},
		// HMS 3 has no server-side guard: deltasync is held at its lock
		// request, before the re-read under the lock (the last point a
		// guard can act; a lockless writer inside the alter itself cannot
		// be detected on 3.x: catalog/hms TestTwoWriterHMS3).
		{"hms3", func(t *testing.T, dir, style string) twoWriterKind {
			return newHMSTwoWriter(t, newHMSEnv(t, "", "DELTASYNC_HMS3_URL"), dir, style, "lock")
		}, []string{"raw", "hive"}},
	}
}

// TestTwoWriterEveryKind is one test body over every kind: deltasync's
// write is held while another client advances the record to the log's
// next version (the log has it) and adds owner.team. The other writer's
// version and key must survive: deltasync's write is refused (its guard:
// Unity Catalog's etag, HMS 4's expectation on delta.lastUpdateVersion,
// HMS 3's re-read under the lock), the reconcile reads again and writes
// only what still differs (the property a catalog-side edit removed),
// keeping owner.team. "same": deltasync's write does not move the version
// (the record is at the log's version 1, only the property removed);
// "moves": the log is at 2 when deltasync plans, the other writer at 3.
func TestTwoWriterEveryKind(t *testing.T) {
	const prop = "delta.enableDeletionVectors"
	for _, k := range twoWriterKinds() {
		for _, style := range k.styles {
			for _, variant := range []string{"same", "moves"} {
				t.Run(k.name+"/"+style+"/"+variant, func(t *testing.T) {
					dir, _ := logTable(t, "deletion_vectors_disabled", "tw", 1)
					kind := k.make(t, dir, style)
					v := int64(1)
					if variant == "moves" {
						copyLog(t, "deletion_vectors_disabled", dir, 2)
						v = 2
					}
					kind.drop(prop)
					fired := false
					r := kind.reconciler(func() {
						fired = true
						copyLog(t, "deletion_vectors_disabled", dir, v+1) // the log has it
						kind.advance(v + 1)
					})
					res := resultOf(t, r.Sync(context.Background()), kind.name())
					if !fired {
						t.Fatalf("deltasync never wrote (%s %s %s): the test needs a write to hold", res.Outcome, res.Status, res.Reason)
					}
					got, props := kind.state()
					if got != v+1 || props["owner.team"] != "data-eng" {
						t.Errorf("after the cycle the record is at version %d, owner.team %q; want the other writer's %d and data-eng (%s after %d attempts)", got, props["owner.team"], v+1, res.Outcome, res.Attempts)
					}
					if res.Outcome != sync.OutcomeSynced || res.Attempts < 2 {
						t.Errorf("%s after %d attempts (%s); want synced after the held write was refused and re-planned", res.Outcome, res.Attempts, res.Reason)
					}
					if props[prop] == "" {
						t.Errorf("%s was not restored on the re-plan: %v", prop, props)
					}
				})
			}
		}
	}
}

// ucTwoWriter is the test on Unity Catalog.
type ucTwoWriter struct {
	t     *testing.T
	e     *env
	table string
	dir   string
}

func newUCTwoWriter(t *testing.T, e *env, dir string) *ucTwoWriter {
	t.Helper()
	w := &ucTwoWriter{t: t, e: e, table: "tw", dir: dir}
	if _, err := sync.Register(context.Background(), kindOf(e.client), snapshot(t, dir), e.name(w.table), "file://"+dir); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *ucTwoWriter) name() string { return w.e.name(w.table).String() }

func (w *ucTwoWriter) reconciler(interfere func()) *sync.Reconciler {
	p := w.e.interloper(w.table, interfere)
	// On Unity Catalog every property is the log's unless the user says
	// otherwise: owner.* is declared another client's.
	return w.e.reconciler([]sync.Rule{{Include: []string{w.e.catalog + "." + w.e.schema + ".*"}}}, func(o *sync.Options) {
		o.Catalog = kindOf(p.client)
		o.Diff.IgnoreProperties = []string{"owner.*"}
	})
}

func (w *ucTwoWriter) update(u ...uc.Update) {
	w.t.Helper()
	ctx := context.Background()
	lt, err := w.e.client.LoadTable(ctx, w.e.name(w.table))
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.e.client.UpdateTable(ctx, w.e.name(w.table), uc.UpdateTableRequest{
		Requirements: []uc.Requirement{uc.AssertTableUUID{UUID: lt.Metadata.TableUUID}, uc.AssertEtag{Etag: lt.Metadata.Etag}},
		Updates:      u,
	}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *ucTwoWriter) drop(key string) { w.update(uc.RemoveProperties{Removals: []string{key}}) }

func (w *ucTwoWriter) advance(v int64) {
	ts := snapshot(w.t, w.dir).CommitTimestamp // the log's own
	w.update(uc.SetProperties{Updates: map[string]string{"owner.team": "data-eng"}},
		uc.UpdateMetadataSnapshotVersion{LastCommitVersion: v, LastCommitTimestampMs: ts})
}

func (w *ucTwoWriter) state() (int64, map[string]string) {
	rec := w.e.record(w.table)
	v := int64(-1)
	if rec.LastCommitVersion != nil {
		v = *rec.LastCommitVersion
	}
	return v, rec.Properties
}

// hmsTwoWriter is the test on a Hive Metastore.
type hmsTwoWriter struct {
	t     *testing.T
	e     *hmsEnv
	style string
	at    string // the call of deltasync's that is held
}

func newHMSTwoWriter(t *testing.T, e *hmsEnv, dir, style, at string) *hmsTwoWriter {
	t.Helper()
	w := &hmsTwoWriter{t: t, e: e, style: style, at: at}
	e.sparkRegister("tw", "file://"+dir)
	if res := resultOf(t, e.reconciler().Sync(context.Background()), w.name()); res.Outcome != sync.OutcomeSynced {
		t.Fatalf("first sync: %s %s", res.Outcome, res.Reason)
	}
	return w
}

func (w *hmsTwoWriter) name() string { return "hive." + w.e.db + ".tw" }

func (w *hmsTwoWriter) reconciler(interfere func()) *sync.Reconciler {
	p := fakehms.NewHoldProxy(w.t, w.e.url)
	c, err := hms.New(p.URL, hms.Options{Timeout: time.Minute})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = c.Close() })
	h := p.Hold(w.at)
	go func() {
		<-h.Reached()
		interfere()
		h.Release()
	}()
	return w.e.reconciler(func(o *sync.Options) { o.Catalog = hms.NewKind(c, hms.KindOptions{LockWait: 5 * time.Second}) })
}

func (w *hmsTwoWriter) drop(key string) {
	w.t.Helper()
	ctx := context.Background()
	got, err := w.e.plain.GetTable(ctx, w.e.db, "tw")
	if err != nil {
		w.t.Fatal(err)
	}
	next := *got.Thrift
	next.Parameters = maps.Clone(got.Thrift.Parameters)
	delete(next.Parameters, key)
	if err := w.e.plain.AlterTable(ctx, got, &next, hms.Guard{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *hmsTwoWriter) advance(v int64) {
	params := map[string]string{hms.KeyLastUpdateVersion: strconv.FormatInt(v, 10), "owner.team": "data-eng"}
	if w.style == "raw" {
		w.e.rawEdit("tw", params)
	} else {
		w.e.hiveEdit("tw", params)
	}
}

func (w *hmsTwoWriter) state() (int64, map[string]string) {
	p := w.e.stored("tw").Parameters
	v, err := strconv.ParseInt(p[hms.KeyLastUpdateVersion], 10, 64)
	if err != nil {
		v = -1
	}
	return v, p
}
