// Package kindtest is the kind contract: every behaviour deltasync
// promises of a catalog kind, written once (Run) and run against each
// kind through a Harness. A kind's test provides the Harness — how its
// catalog is plugged into sync.Options, how its own writers register a
// table, how its own client reads a record — and nothing else: every
// behaviour and every assertion is here, the same for every kind.
//
// The suite writes its own Delta logs (metadata-only commits, stdlib
// JSON), so what each behaviour needs of a log is in the behaviour.
package kindtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// Record is what the suite checks of a catalog record, read by the
// kind's own client.
type Record struct {
	// Version is the log version the record says it describes (-1: none).
	Version int64
	// Props are the table's properties as the kind stores them (UC's
	// properties, HMS's table parameters).
	Props map[string]string
}

// Edit is another client's write of a record: Props set and, when
// Version >= 0, the record's version moved to Version (committed at
// Timestamp, ms), as a concurrent engine would.
type Edit struct {
	Props     map[string]string
	Version   int64
	Timestamp int64
}

// Harness is one catalog kind under the contract. All kind-plugging is
// in its implementations: the suite never names a kind.
type Harness interface {
	// CatalogName and Schema are the first two parts of every table's
	// name (<CatalogName>.<Schema>.<table>): a schema (HMS: database)
	// that exists and that the test owns.
	CatalogName() string
	Schema() string
	// URL is the catalog's URL, as a saved plan records it.
	URL() string
	// Options is base with this kind's catalog plugged in, through a
	// client whose requests Requests counts.
	Options(t *testing.T, base sync.Options) sync.Options
	// ApplyOptions is base with this kind's catalog plugged in.
	ApplyOptions(t *testing.T, base change.ApplyOptions) change.ApplyOptions
	// Register creates the record of the log at dir under name as the
	// kind's own writers leave it (UC: createTable EXTERNAL in sync with
	// the log; HMS: Spark's registration, no Delta state).
	Register(t *testing.T, name, dir string)
	// Record reads the record; false when there is none.
	Record(t *testing.T, name string) (Record, bool)
	// OtherWriter is a concurrent client's write of the record.
	OtherWriter(t *testing.T, name string, e Edit)
	// HoldNextWrite is base (as Options) with deltasync's next write of
	// name held until interfere (another writer) has run.
	HoldNextWrite(t *testing.T, name string, base sync.Options, interfere func()) sync.Options
	// Refusing makes the kind refuse deltasync's next write of name (the
	// table registered and synced from the log at dir, which has drift
	// to write): the options to reconcile with (as Options).
	Refusing(t *testing.T, name, dir string, base sync.Options) sync.Options
	// Requests returns the requests Options' client sent since the last
	// call, per operation, and starts counting again.
	Requests() map[string]int
	// IsWrite reports whether an operation writes a record.
	IsWrite(op string) bool
	// SteadyRequests is the most requests a cycle may send for n tables
	// all verified unchanged and confirmed by the listing (fast path).
	SteadyRequests(n int) int
	// Untouched is a canonical dump of every field of the record that
	// the kind does not own: byte-equal before and after any write.
	Untouched(t *testing.T, name string) string
}

// Run runs every behaviour of the contract against h, one subtest each.
func Run(t *testing.T, h Harness) {
	for _, b := range []struct {
		name string
		run  func(*testing.T, *suite)
	}{
		{"fast-path", fastPath},
		{"write-only-on-change", writeOnlyOnChange},
		{"hold", hold},
		{"saved-plan-apply", savedPlanApply},
		{"audit", auditRecord},
		{"register", registers},
		{"refusal", refusal},
		{"concurrent-writer", concurrentWriter},
		{"allow-list", allowList},
		{"fidelity", fidelity},
	} {
		t.Run(b.name, func(t *testing.T) {
			start := time.Now()
			b.run(t, &suite{t: t, h: h, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
			t.Logf("%s: %s", b.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// suite is one behaviour's run: the harness, and the clock its
// reconcilers read.
type suite struct {
	t   *testing.T
	h   Harness
	now time.Time
}

// full is a table's full name.
func (s *suite) full(name string) string {
	return s.h.CatalogName() + "." + s.h.Schema() + "." + name
}

// base is the kind-neutral options of a reconciler over rules: the temp
// dir allowed, the suite's clock, owner.* another client's on every kind.
func (s *suite) base(rules []sync.Rule, mutate ...func(*sync.Options)) sync.Options {
	s.t.Helper()
	sel, err := sync.NewSelector(rules)
	if err != nil {
		s.t.Fatal(err)
	}
	pol, err := sync.NewStoragePolicy([]string{"file://" + filepath.ToSlash(os.TempDir()) + "/**"}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	o := sync.Options{Selector: sel, Storage: pol, Concurrency: 2, Now: func() time.Time { return s.now }}
	o.Diff.IgnoreProperties = []string{"owner.*"}
	for _, m := range mutate {
		m(&o)
	}
	return o
}

// reconciler is a reconciler with o, closed when the test ends.
func (s *suite) reconciler(o sync.Options) *sync.Reconciler {
	s.t.Helper()
	r, err := sync.New(o)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = r.Close() })
	return r
}

// over is a reconciler over the named tables (exact names), this kind's.
func (s *suite) over(names []string, mutate ...func(*sync.Options)) *sync.Reconciler {
	s.t.Helper()
	var inc []string
	for _, n := range names {
		inc = append(inc, s.full(n))
	}
	return s.reconciler(s.h.Options(s.t, s.base([]sync.Rule{{Include: inc}}, mutate...)))
}

// cycle runs one cycle and takes the requests it sent.
func (s *suite) cycle(r *sync.Reconciler) (*sync.Report, map[string]int) {
	s.t.Helper()
	s.h.Requests()
	rep := r.Sync(context.Background())
	return rep, s.h.Requests()
}

// writes counts the writing requests of ops.
func (s *suite) writes(ops map[string]int) int {
	n := 0
	for op, c := range ops {
		if s.h.IsWrite(op) {
			n += c
		}
	}
	return n
}

// result is the report's row of a table (fatal when there is none).
func (s *suite) result(rep *sync.Report, name string) sync.Result {
	s.t.Helper()
	for _, r := range rep.Results {
		if r.Table == s.full(name) {
			return r
		}
	}
	s.t.Fatalf("no result for %s in %s\n%s", s.full(name), rep.Summary(), text(rep))
	return sync.Result{}
}

// has reports whether the report has a row for the table.
func (s *suite) has(rep *sync.Report, name string) bool {
	for _, r := range rep.Results {
		if strings.EqualFold(r.Table, s.full(name)) {
			return true
		}
	}
	return false
}

// record reads a record that must exist.
func (s *suite) record(name string) Record {
	s.t.Helper()
	r, ok := s.h.Record(s.t, name)
	if !ok {
		s.t.Fatalf("%s: no record", s.full(name))
	}
	return r
}

// table writes a table's log at version 0 under a fresh temp dir and
// registers it as the kind's writers do; synced, it then runs one cycle
// over it so the record holds the log (a kind whose writers leave no
// Delta state gets it from this cycle).
func (s *suite) table(name string, conf map[string]string, synced bool) string {
	s.t.Helper()
	dir := filepath.Join(s.t.TempDir(), name)
	Commit(s.t, dir, 0, Schema, conf)
	s.h.Register(s.t, name, dir)
	if synced {
		rep := s.over([]string{name}).Sync(context.Background())
		if res := s.result(rep, name); res.Outcome != sync.OutcomeSynced && res.Outcome != sync.OutcomeUnchanged {
			s.t.Fatalf("%s: the first cycle: %s %s (%s)", name, res.Outcome, res.ErrorReason, res.Reason)
		}
	}
	return dir
}

// auditWriter is an audit trail in a temp file and a reader of its records.
func (s *suite) auditWriter() (*audit.Writer, func() []map[string]any) {
	s.t.Helper()
	path := filepath.Join(s.t.TempDir(), "audit.jsonl")
	w, err := audit.Open(audit.Options{Path: path})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = w.Close() })
	return w, func() []map[string]any {
		s.t.Helper()
		_ = w.Close()
		return readAudit(s.t, path)
	}
}

func text(rep *sync.Report) string {
	var b bytes.Buffer
	_ = rep.WriteText(&b)
	return b.String()
}

// kind is the name of the harness's catalog kind (catalog.Kind.Name), as
// a saved plan records it.
func (s *suite) kind(t *testing.T) string {
	t.Helper()
	o := s.h.Options(t, sync.Options{})
	if o.Catalog == nil {
		t.Fatal("the harness plugs no catalog into sync.Options")
	}
	return o.Catalog.Name()
}
