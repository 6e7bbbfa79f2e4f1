package kindtest

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
	"github.com/deltasync/deltasync/sync/register"
)

// conf30 and conf60 are the log properties of version 0 and of a later
// version that changes one of them (a non-destructive change).
var (
	conf30 = map[string]string{Retention: "interval 30 days", "delta.appendOnly": "false"}
	conf60 = map[string]string{Retention: "interval 60 days", "delta.appendOnly": "false"}
)

// fastPath: once verified, a cycle over unchanged tables costs at most
// the kind's declared requests (the listing, no request per table) and
// writes nothing.
func fastPath(t *testing.T, s *suite) {
	names := []string{"fp_a", "fp_b", "fp_c"}
	for _, n := range names {
		s.table(n, conf30, false)
	}
	r := s.reconciler(s.h.Options(t, s.base([]sync.Rule{{Include: []string{s.full("fp_*")}}}, func(o *sync.Options) {
		o.ResyncInterval = time.Hour
	})))
	rep, _ := s.cycle(r)
	for _, n := range names {
		if res := s.result(rep, n); res.Outcome != sync.OutcomeSynced && res.Outcome != sync.OutcomeUnchanged {
			t.Fatalf("first cycle: %s %s (%s)", n, res.Outcome, res.Reason)
		}
	}
	s.now = s.now.Add(time.Minute)
	rep, ops := s.cycle(r)
	total := 0
	for _, n := range ops {
		total += n
	}
	t.Logf("a steady cycle over %d tables: %d requests %v", len(names), total, ops)
	for _, n := range names {
		if res := s.result(rep, n); res.Outcome != sync.OutcomeUnchanged {
			t.Errorf("second cycle: %s %s (%s), want unchanged", n, res.Outcome, res.Reason)
		}
	}
	if bound := s.h.SteadyRequests(len(names)); total > bound {
		t.Errorf("a steady cycle over %d unchanged tables sent %d requests %v; the kind allows %d", len(names), total, ops, bound)
	}
	if w := s.writes(ops); w != 0 {
		t.Errorf("a steady cycle wrote %d times: %v", w, ops)
	}
}

// writeOnlyOnChange: a cycle writes once for the table whose log moved,
// nothing for the one in sync, and a second cycle writes nothing.
func writeOnlyOnChange(t *testing.T, s *suite) {
	dir := s.table("ch_moved", conf30, true)
	s.table("ch_still", conf30, true)
	Commit(t, dir, 1, Schema, conf60)
	names := []string{"ch_moved", "ch_still"}
	rep, ops := s.cycle(s.over(names))
	if res := s.result(rep, "ch_moved"); res.Outcome != sync.OutcomeSynced {
		t.Fatalf("ch_moved: %s %s (%s), want synced\n%s", res.Outcome, res.ErrorReason, res.Reason, text(rep))
	}
	if res := s.result(rep, "ch_still"); res.Outcome != sync.OutcomeUnchanged {
		t.Errorf("ch_still: %s (%s), want unchanged", res.Outcome, res.Reason)
	}
	if w := s.writes(ops); w != 1 {
		t.Errorf("the cycle wrote %d times %v, want once (ch_moved)", w, ops)
	}
	if got := s.record("ch_moved"); got.Version != 1 || got.Props[Retention] != conf60[Retention] {
		t.Errorf("ch_moved after the cycle: version %d, %s %q; want the log's 1 and %q", got.Version, Retention, got.Props[Retention], conf60[Retention])
	}
	rep, ops = s.cycle(s.over(names))
	for _, n := range names {
		if res := s.result(rep, n); res.Outcome != sync.OutcomeUnchanged {
			t.Errorf("second run: %s %s (%s), want unchanged", n, res.Outcome, res.Reason)
		}
	}
	if w := s.writes(ops); w != 0 {
		t.Errorf("the second run wrote %d times: %v", w, ops)
	}
}

// hold: under on_destructive: hold a table whose log dropped a property
// is held whole: nothing sent, the record as it was, flagged held, the
// held write in the audit trail.
func hold(t *testing.T, s *suite) {
	dir := s.table("ho", conf30, true)
	Commit(t, dir, 1, Schema, map[string]string{"delta.appendOnly": "false"}) // Retention removed: destructive
	before, untouched := s.record("ho"), s.h.Untouched(t, "ho")
	w, records := s.auditWriter()
	r := s.reconciler(s.h.Options(t, s.base([]sync.Rule{{Include: []string{s.full("ho")}, OnDestructive: sync.OnDestructiveHold}},
		func(o *sync.Options) { o.Audit = change.AuditOptions{Writer: w, Command: "once", Version: "kindtest"} })))
	rep, ops := s.cycle(r)
	res := s.result(rep, "ho")
	if res.Held != sync.HeldDestructive || res.Outcome != sync.OutcomeFlagged || res.Status != sync.StatusOutOfSync ||
		!strings.Contains(res.Reason, "held: destructive") || !strings.Contains(res.Reason, Retention) {
		t.Errorf("held %q, %s %s (%s); want held destructive, flagged OutOfSync, naming %s", res.Held, res.Outcome, res.Status, res.Reason, Retention)
	}
	if !rep.Drift() {
		t.Error("a held table is not drift")
	}
	if n := s.writes(ops); n != 0 {
		t.Errorf("a held table was written: %v", ops)
	}
	if got := s.record("ho"); got.Version != before.Version || got.Props[Retention] != before.Props[Retention] {
		t.Errorf("held record changed: version %d -> %d, %s %q -> %q", before.Version, got.Version, Retention, before.Props[Retention], got.Props[Retention])
	}
	s.sameUntouched("ho", untouched)
	var held []map[string]any
	for _, rec := range records() {
		if rec["table"] == s.full("ho") {
			held = append(held, rec)
		}
	}
	if len(held) != 1 || held[0]["outcome"] != string(audit.OutcomeHeld) || held[0]["etag_after"] != nil ||
		held[0]["etag_before"] != res.Etag || held[0]["cycle"] == nil {
		t.Errorf("audit records of ho %v; want one held record, etag_before %q, no etag_after", held, res.Etag)
	}
}

// savedPlanApply: a dry run's saved plan sends nothing; apply sends it,
// table by table; a table another client changed since the plan is
// refused as stale and left as that client left it.
func savedPlanApply(t *testing.T, s *suite) {
	dirA := s.table("pa", conf30, true)
	dirB := s.table("pb", conf30, true)
	Commit(t, dirA, 1, Schema, conf60)
	Commit(t, dirB, 1, Schema, conf60)
	names := []string{"pa", "pb"}
	dry, ops := s.cycle(s.over(names, func(o *sync.Options) { o.DryRun = true }))
	if w := s.writes(ops); w != 0 {
		t.Fatalf("the plan wrote: %v", ops)
	}
	var buf bytes.Buffer
	if err := sync.NewSavedPlan(dry, s.h.URL(), s.kind(t), "kindtest", s.now).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	sp, err := change.ReadSavedPlan(&buf, "plan.json")
	if err != nil {
		t.Fatalf("the saved plan does not read back: %v", err)
	}
	if err := sp.CheckCatalog(s.h.URL(), s.kind(t)); err != nil || len(sp.Tables) != 2 {
		t.Fatalf("saved plan: %d tables, check %v; want 2 for this catalog\n%s", len(sp.Tables), err, text(dry))
	}
	_, tsB := Latest(t, dirB)
	s.h.OtherWriter(t, "pb", Edit{Props: map[string]string{"owner.team": "data-eng"}, Version: -1, Timestamp: tsB})
	untouchedB := s.h.Untouched(t, "pb")
	w, records := s.auditWriter()
	s.h.Requests()
	rep := change.Apply(context.Background(), s.h.ApplyOptions(t, change.ApplyOptions{Audit: change.AuditOptions{Writer: w, Command: "apply", Version: "kindtest"}}), sp)
	// One guarded write per table at most, none resent: a kind whose
	// guard is the server's sends pb's too (and it is refused).
	if w := s.writes(s.h.Requests()); w < 1 || w > len(sp.Tables) {
		t.Errorf("apply wrote %d times, want one guarded write per table at most (%d), pa's at least", w, len(sp.Tables))
	}
	got := map[string]change.ApplyResult{}
	for _, r := range rep.Results {
		got[r.Table] = r
	}
	if r := got[s.full("pa")]; r.Outcome != audit.OutcomeSynced {
		t.Errorf("pa: %s %q, want synced", r.Outcome, r.Reason)
	}
	if r := got[s.full("pb")]; r.Outcome != audit.OutcomeRefused || !strings.Contains(r.Reason, "stale") {
		t.Errorf("pb: %s %q, want refused as stale", r.Outcome, r.Reason)
	}
	if rec := s.record("pa"); rec.Version != 1 || rec.Props[Retention] != conf60[Retention] {
		t.Errorf("pa after apply: version %d, %s %q", rec.Version, Retention, rec.Props[Retention])
	}
	if rec := s.record("pb"); rec.Version != 0 || rec.Props["owner.team"] != "data-eng" || rec.Props[Retention] != conf30[Retention] {
		t.Errorf("pb after a stale apply: version %d, owner.team %q, %s %q; want the other writer's record", rec.Version, rec.Props["owner.team"], Retention, rec.Props[Retention])
	}
	s.sameUntouched("pb", untouchedB)
	outcomes := map[string]any{}
	for _, rec := range records() {
		outcomes[rec["table"].(string)] = rec["outcome"]
	}
	if outcomes[s.full("pa")] != "synced" || outcomes[s.full("pb")] != "refused" {
		t.Errorf("apply's audit outcomes %v; want pa synced, pb refused", outcomes)
	}
	rep2, _ := s.cycle(s.over([]string{"pa"}))
	if res := s.result(rep2, "pa"); res.Outcome != sync.OutcomeUnchanged {
		t.Errorf("a cycle after apply: pa %s %v, want unchanged", res.Outcome, res.Actions)
	}
}

// auditRecord: a synced write is one audit record: the table, its id,
// the etag it was guarded by, synced, the log version and each change
// with the record's value before and the log's after.
func auditRecord(t *testing.T, s *suite) {
	dir := s.table("au", conf30, true)
	Commit(t, dir, 1, Schema, conf60)
	dry, _ := s.cycle(s.over([]string{"au"}, func(o *sync.Options) { o.DryRun = true }))
	planned := s.result(dry, "au")
	w, records := s.auditWriter()
	rep, _ := s.cycle(s.over([]string{"au"}, func(o *sync.Options) {
		o.Audit = change.AuditOptions{Writer: w, Command: "once", Version: "kindtest"}
	}))
	res := s.result(rep, "au")
	if res.Outcome != sync.OutcomeSynced {
		t.Fatalf("au: %s (%s), want synced", res.Outcome, res.Reason)
	}
	recs := records()
	if len(recs) != 1 {
		t.Fatalf("%d audit records %v, want 1", len(recs), recs)
	}
	r := recs[0]
	if r["table"] != s.full("au") || r["outcome"] != "synced" || r["command"] != "once" || r["cycle"] == nil ||
		r["table_id"] != planned.TableID || r["etag_before"] != planned.Etag || r["etag_after"] == nil || r["log_version"] != float64(1) {
		t.Errorf("audit record %v; want au synced by once in a cycle, table_id %q, etag_before %q, an etag_after, log_version 1", r, planned.TableID, planned.Etag)
	}
	found := false
	changes, _ := r["changes"].([]any)
	for _, c := range changes {
		c, _ := c.(map[string]any)
		if strings.Contains(c["field"].(string), Retention) {
			found = c["before"] == conf30[Retention] && c["after"] == conf60[Retention] && c["op"] == "change"
		}
	}
	if !found {
		t.Errorf("audit changes %v; want %s changed from %q to %q", changes, Retention, conf30[Retention], conf60[Retention])
	}
}

// registers: a register rule creates the record of a table found in storage,
// in sync with its log; a tables[] rule in mode warn withholds its name;
// the next cycle writes nothing.
func registers(t *testing.T, s *suite) {
	root := t.TempDir()
	for _, n := range []string{"ad_new", "ad_warn"} {
		Commit(t, root+"/"+s.h.Schema()+"/"+n, 0, Schema, conf30)
	}
	rule := register.Rule{Location: "file://" + root + "/{schema}/{table}", Name: s.h.CatalogName() + ".{schema}.{table}"}
	r := s.reconciler(s.h.Options(t, s.base([]sync.Rule{{Include: []string{s.full("ad_warn")}, Mode: sync.ModeWarn}}, func(o *sync.Options) {
		o.Register = &register.Options{Rules: []register.Rule{rule}}
		o.ResyncInterval = time.Hour
	})))
	for i := range 2 {
		rep, ops := s.cycle(r)
		w := s.result(rep, "ad_warn")
		if w.Mode != sync.ModeWarn || w.Outcome != sync.OutcomeFlagged || w.Registration == nil || !strings.Contains(w.Reason, "warn") {
			t.Errorf("cycle %d: ad_warn %s %s (%s), registration %v; want flagged by the warn rule with the registration it would make", i+1, w.Mode, w.Outcome, w.Reason, w.Registration)
		}
		want := 0
		if i == 0 {
			want = 1
			if a := s.result(rep, "ad_new"); a.Outcome != sync.OutcomeRegistered {
				t.Fatalf("cycle 1: ad_new %s (%s), want registered\n%s", a.Outcome, a.Reason, text(rep))
			}
		}
		if n := s.writes(ops); n != want {
			t.Errorf("cycle %d wrote %d times %v, want %d", i+1, n, ops, want)
		}
	}
	if got := s.record("ad_new"); got.Version != 0 || got.Props[Retention] != conf30[Retention] {
		t.Errorf("ad_new registered at version %d, %s %q; want the log's 0 and %q", got.Version, Retention, got.Props[Retention], conf30[Retention])
	}
	if _, ok := s.h.Record(t, "ad_warn"); ok {
		t.Error("ad_warn was registered: a warn rule's name must not be")
	}
}

// refusal: a write the catalog refuses is flagged refused, the record
// left as it was, and not sent again on the next cycles: only after the
// refusal backoff.
func refusal(t *testing.T, s *suite) {
	dir := s.table("rf", conf30, true)
	Commit(t, dir, 1, Schema, conf60)
	before, untouched := s.record("rf"), s.h.Untouched(t, "rf")
	r := s.reconciler(s.h.Refusing(t, "rf", dir, s.base([]sync.Rule{{Include: []string{s.full("rf")}}})))
	rep, ops := s.cycle(r)
	res := s.result(rep, "rf")
	if res.Outcome != sync.OutcomeFlagged || res.ErrorReason != sync.ReasonRefused || res.Status != sync.StatusOutOfSync || res.Refused == nil {
		t.Fatalf("rf: %s %s %s (%s), refusal %v; want flagged refused OutOfSync with the catalog's answer", res.Outcome, res.ErrorReason, res.Status, res.Reason, res.Refused)
	}
	t.Logf("refused: %s (requests %v)", res.Reason, ops)
	// A kind may send what it can of the write without the refused
	// change (UC splits it), never the watermark past it.
	if got := s.record("rf"); got.Version != before.Version {
		t.Errorf("the refused write moved the record's version %d -> %d", before.Version, got.Version)
	}
	s.sameUntouched("rf", untouched)
	s.now = s.now.Add(time.Minute)
	rep, ops = s.cycle(r)
	if s.has(rep, "rf") || !slices.Contains(rep.Deferred, s.full("rf")) || s.writes(ops) != 0 {
		t.Errorf("a minute later: rf reconciled %v, deferred %v, requests %v; want it deferred and nothing sent", s.has(rep, "rf"), rep.Deferred, ops)
	}
	s.now = s.now.Add(2 * time.Hour)
	rep, _ = s.cycle(r)
	if res := s.result(rep, "rf"); res.ErrorReason != sync.ReasonRefused {
		t.Errorf("after the backoff: %s %s (%s), want refused again", res.Outcome, res.ErrorReason, res.Reason)
	}
}

// concurrentWriter: deltasync's guarded write is held while another
// client moves the record to the log's next version with a property of
// its own; the write loses, the reconcile reads again and re-plans, and
// the other client's version and property survive with the log's change.
func concurrentWriter(t *testing.T, s *suite) {
	dir := s.table("cw", conf30, true)
	Commit(t, dir, 1, Schema, conf60)
	fired := false
	o := s.h.HoldNextWrite(t, "cw", s.base([]sync.Rule{{Include: []string{s.full("cw")}}}), func() {
		fired = true
		Commit(t, dir, 2, "", nil) // the log has the other writer's version
		_, ts := Latest(t, dir)
		s.h.OtherWriter(t, "cw", Edit{Props: map[string]string{"owner.team": "data-eng"}, Version: 2, Timestamp: ts})
	})
	rep, _ := s.cycle(s.reconciler(o))
	res := s.result(rep, "cw")
	if !fired {
		t.Fatalf("deltasync never wrote cw (%s %s): nothing was held", res.Outcome, res.Reason)
	}
	if res.Outcome != sync.OutcomeSynced || res.Attempts < 2 {
		t.Errorf("cw: %s after %d attempts (%s); want synced after the held write lost and was re-planned", res.Outcome, res.Attempts, res.Reason)
	}
	got := s.record("cw")
	if got.Version != 2 || got.Props["owner.team"] != "data-eng" || got.Props[Retention] != conf60[Retention] {
		t.Errorf("cw: version %d, owner.team %q, %s %q; want the other writer's 2 and data-eng, and the log's %q",
			got.Version, got.Props["owner.team"], Retention, got.Props[Retention], conf60[Retention])
	}
}

// allowList: a table the rules leave out (by exclude) is never
// reconciled nor written, however far its record is behind its log.
func allowList(t *testing.T, s *suite) {
	dirIn := s.table("al_in", conf30, false)
	dirOut := s.table("al_out", conf30, false)
	Commit(t, dirIn, 1, Schema, conf60)
	Commit(t, dirOut, 1, Schema, conf60)
	before, untouched := s.record("al_out"), s.h.Untouched(t, "al_out")
	rules := []sync.Rule{{Include: []string{s.full("al_*")}, Exclude: []string{s.full("al_out")}}}
	for _, dry := range []bool{true, false} {
		rep, _ := s.cycle(s.reconciler(s.h.Options(t, s.base(rules, func(o *sync.Options) { o.DryRun = dry }))))
		if s.has(rep, "al_out") || slices.Contains(rep.Deferred, s.full("al_out")) {
			t.Errorf("dry run %v: al_out, outside the selection, was reconciled:\n%s", dry, text(rep))
		}
		if res := s.result(rep, "al_in"); res.Outcome == sync.OutcomeFailed {
			t.Errorf("al_in: %s (%s)", res.Outcome, res.Reason)
		}
	}
	if got := s.record("al_out"); got.Version != before.Version || !maps.Equal(got.Props, before.Props) {
		t.Errorf("al_out written: version %d -> %d, %v -> %v", before.Version, got.Version, before.Props, got.Props)
	}
	s.sameUntouched("al_out", untouched)
	if got := s.record("al_in"); got.Version != 1 {
		t.Errorf("al_in at version %d, want 1: the selected table was not synced", got.Version)
	}
}

// fidelity: a reconcile's write and an apply's write change no field of
// the record the kind does not own.
func fidelity(t *testing.T, s *suite) {
	dirOnce := s.table("fi_once", conf30, false)
	dirApply := s.table("fi_apply", conf30, false)
	Commit(t, dirOnce, 1, Schema, conf60)
	Commit(t, dirApply, 1, Schema, conf60)
	// Another client's property, which deltasync does not own, on each.
	for _, n := range []string{"fi_once", "fi_apply"} {
		s.h.OtherWriter(t, n, Edit{Props: map[string]string{"owner.team": "data-eng"}, Version: -1})
	}
	once, apply := s.h.Untouched(t, "fi_once"), s.h.Untouched(t, "fi_apply")
	rep, ops := s.cycle(s.over([]string{"fi_once"}))
	if res := s.result(rep, "fi_once"); res.Outcome != sync.OutcomeSynced || s.writes(ops) == 0 {
		t.Fatalf("fi_once: %s (%s), requests %v: the test needs a write", res.Outcome, res.Reason, ops)
	}
	s.sameUntouched("fi_once", once)
	dry, _ := s.cycle(s.over([]string{"fi_apply"}, func(o *sync.Options) { o.DryRun = true }))
	sp := sync.NewSavedPlan(dry, s.h.URL(), s.kind(t), "kindtest", s.now)
	ar := change.Apply(context.Background(), s.h.ApplyOptions(t, change.ApplyOptions{}), sp)
	if !ar.Applied() || len(ar.Results) != 1 {
		t.Fatalf("apply of fi_apply: %+v", ar.Results)
	}
	s.sameUntouched("fi_apply", apply)
}

// sameUntouched asserts the fields the kind does not own are as before.
func (s *suite) sameUntouched(name, before string) {
	s.t.Helper()
	if before == "" {
		s.t.Errorf("%s: the kind's dump of the fields it does not own is empty: nothing compared", s.full(name))
	}
	if after := s.h.Untouched(s.t, name); after != before {
		s.t.Errorf("%s: a field deltasync does not own changed:\n%s", s.full(name), lineDiff(before, after))
	}
}

// lineDiff lists the lines only before has (-) and only after has (+).
func lineDiff(before, after string) string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "-"+l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "+"+l)
		}
	}
	return strings.Join(out, "\n")
}
