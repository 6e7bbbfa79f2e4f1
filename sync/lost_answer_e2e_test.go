package sync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/audit"
	"github.com/deltasync/deltasync/sync/change"
)

// lossKind is how the lossy proxy breaks one updateTable.
type lossKind int

const (
	cutBefore    lossKind = iota + 1 // close the connection; the server never sees it
	cutAfter                         // forward (the server applies it), close before the answer
	status5xx                        // forward, answer 503 instead of the server's 200
	timeoutAfter                     // forward, hold the answer until the client gives up
)

// loss is one armed fault: its kind, and whether to cut every Delta API
// table read after it (so that the read resolving it fails too) until
// healReads.
type loss struct {
	kind     lossKind
	cutReads bool
}

// served is one updateTable the server answered, as the proxy saw it:
// the etag it was guarded by and, for a 200, the etag it left.
type served struct {
	status      int
	etagBefore  string
	etagAfter   string
	clientHeard bool
}

// lossyProxy is a reverse proxy in front of the catalog that loses the
// answers of updateTable requests as armed, and records every one the
// server answered: the server's own history of writes.
type lossyProxy struct {
	t        *testing.T
	upstream *url.URL
	srv      *httptest.Server

	mu       gosync.Mutex
	updates  []loss
	cutReads bool
	history  []served
}

func newLossyProxy(t *testing.T, base string) *lossyProxy {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{t: t, upstream: &url.URL{Scheme: u.Scheme, Host: u.Host}}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// arm queues faults for the next updateTable requests, one each (loss{}
// lets one pass).
func (p *lossyProxy) arm(ls ...loss) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates = append(p.updates, ls...)
}

// healReads stops cutting table reads.
func (p *lossyProxy) healReads() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutReads = false
}

func (p *lossyProxy) served() []served {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]served(nil), p.history...)
}

func isTableRead(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/delta/v1/catalogs/") && strings.Contains(r.URL.Path, "/tables/")
}

// cut closes the client's connection without an answer.
func cut(t *testing.T, w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = c.Close()
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var f loss
	p.mu.Lock()
	switch {
	case isUpdateTable(r) && len(p.updates) > 0:
		f, p.updates = p.updates[0], p.updates[1:]
	case isTableRead(r) && p.cutReads:
		f.kind = cutBefore
	}
	p.mu.Unlock()
	if f.kind == cutBefore {
		cut(p.t, w)
		return
	}
	out, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, p.upstream.String()+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		p.t.Error(err)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if isUpdateTable(r) {
		s := served{status: resp.StatusCode, clientHeard: f.kind == 0}
		var req struct {
			Requirements []map[string]any `json:"requirements"`
		}
		_ = json.Unmarshal(body, &req)
		for _, q := range req.Requirements {
			if q["type"] == "assert-etag" {
				s.etagBefore, _ = q["etag"].(string)
			}
		}
		var lt uc.LoadTableResponse
		if resp.StatusCode == http.StatusOK && json.Unmarshal(answer, &lt) == nil {
			s.etagAfter = lt.Metadata.Etag
		}
		p.mu.Lock()
		p.history = append(p.history, s)
		p.cutReads = p.cutReads || f.cutReads
		p.mu.Unlock()
	}
	switch f.kind {
	case cutAfter:
		cut(p.t, w)
		return
	case status5xx:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"message":"lost on the way back","type":"ServiceUnavailableException","code":503}}`)
		return
	case timeoutAfter:
		<-r.Context().Done() // the client gave up and closed the connection
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// auditWrites are the audit file's writes as they stand: an unknown record
// resolved later is replaced by the record resolving it, in its place.
func auditWrites(t *testing.T, recs []map[string]any) []map[string]any {
	t.Helper()
	resolved := map[string]map[string]any{}
	for _, r := range recs {
		if at, _ := r["resolves"].(string); at != "" {
			resolved[at] = r
		}
	}
	var out []map[string]any
	for _, r := range recs {
		if r["resolves"] != nil {
			continue
		}
		if r["outcome"] == "unknown" {
			res, ok := resolved[r["time"].(string)]
			if !ok {
				t.Errorf("unknown record never resolved: %v", r)
				continue
			}
			out = append(out, res)
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestLostAnswersAuditedAsTheServerSawThem runs one table through writes
// whose answers are lost on the way back — the connection cut after the
// server applied the update, a 503 instead of its 200, the answer held
// until the client times out — then one cut before it reached the server,
// and one lost whose re-read fails too, against the catalog (the real
// server with DELTASYNC_UC_URL) through a lossy proxy. deltasync is the
// table's only writer (each step is a new commit in the log, a new
// watermark to record). From the audit file alone — unknown records
// replaced by the records resolving them — the writes that took are,
// write for write, the server's history (every updateTable it answered
// 200: the etag it was guarded by and the one it left), their etags chain
// (each etag_before the previous etag_after), the etag an independent
// client reads after each cycle is the last etag_after, and the write
// that never reached the server is not_applied with the etag unchanged.
// Before, the applied writes were audited refused (the resend's 409) or
// failed, with no etag_after, and the chain broke at each.
func TestLostAnswersAuditedAsTheServerSawThem(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dir := e.register("log-replay-latest-metadata-protocol", "lost", -1)
	full := e.name("lost").String()
	px := newLossyProxy(t, e.client.BaseURL())
	base, _ := url.Parse(e.client.BaseURL())
	proxied, err := uc.New(px.srv.URL+base.Path, uc.Options{
		Timeout: 3 * time.Second,
		Retry:   uc.RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	r := e.reconciler([]sync.Rule{{Include: []string{full}}}, func(o *sync.Options) {
		o.Catalog = kindOf(proxied)
		o.Audit = change.AuditOptions{Writer: aw, Command: "run", Version: "test"}
		o.Backoff = sync.Backoff{Initial: time.Nanosecond, Max: time.Nanosecond}
	})

	type step struct {
		name   string
		faults []loss
		commit bool
		// moves: the server's etag moves in this cycle; outcomes: the
		// audit records the cycle adds, in order.
		moves    bool
		outcomes []string
	}
	steps := []step{
		{"cut after the update was applied", []loss{{kind: cutAfter}}, true, true, []string{"synced"}},
		{"503 after the update was applied", []loss{{kind: status5xx}}, true, true, []string{"synced"}},
		{"timeout after the update was applied", []loss{{kind: timeoutAfter}}, true, true, []string{"synced"}},
		{"cut before the request reached the server", []loss{{kind: cutBefore}, {kind: cutBefore}}, true, false, []string{"not_applied"}},
		{"the cycle after it", nil, false, true, []string{"synced"}},
		{"cut after apply, and the re-read cut too", []loss{{kind: cutAfter, cutReads: true}}, true, true, []string{"unknown"}},
		{"the cycle after it resolves it", nil, false, false, []string{"synced"}},
	}
	v := snapshot(t, dir).Version
	nrecs := 0
	for i, s := range steps {
		if s.commit {
			v++
			writeCommit(t, dir, v)
		}
		before := e.record("lost").Etag
		px.arm(s.faults...)
		rep := r.Sync(ctx)
		px.healReads()
		after := e.record("lost").Etag
		if moved := after != before; moved != s.moves {
			t.Fatalf("step %d (%s): the server's etag moved = %v, want %v\n%s", i, s.name, moved, s.moves, reportText(rep))
		}
		recs := readAudit(t, auditPath)
		added := recs[nrecs:]
		nrecs = len(recs)
		var got []string
		for _, a := range added {
			got = append(got, a["outcome"].(string))
		}
		if strings.Join(got, ",") != strings.Join(s.outcomes, ",") {
			t.Fatalf("step %d (%s): audit outcomes %v, want %v: %v\n%s", i, s.name, got, s.outcomes, added, reportText(rep))
		}
		for _, a := range added {
			switch a["outcome"] {
			case "synced":
				if a["etag_after"] != after {
					t.Errorf("step %d (%s): etag_after %v, the server's etag after the cycle %s", i, s.name, a["etag_after"], after)
				}
			case "not_applied", "unknown":
				if a["etag_before"] != before || a["etag_after"] != nil {
					t.Errorf("step %d (%s): %v; want etag_before %s (the server's), no etag_after", i, s.name, a, before)
				}
			}
		}
	}
	_ = aw.Close()

	recs := readAudit(t, auditPath)
	for _, rec := range recs {
		b, _ := json.Marshal(rec)
		validate(t, schemas(t)["audit-record"], "audit record", b)
	}
	var took []map[string]any
	for _, w := range auditWrites(t, recs) {
		if w["outcome"] == "synced" {
			took = append(took, w)
		}
	}
	var history []served
	for _, s := range px.served() {
		if s.status == http.StatusOK {
			history = append(history, s)
		}
	}
	if len(took) != len(history) {
		t.Fatalf("the audit file has %d writes that took, the server answered %d: audit %v, server %+v", len(took), len(history), took, history)
	}
	for i, s := range history {
		if took[i]["etag_before"] != s.etagBefore || took[i]["etag_after"] != s.etagAfter {
			t.Errorf("write %d: audited %v → %v, the server went %s → %s", i, took[i]["etag_before"], took[i]["etag_after"], s.etagBefore, s.etagAfter)
		}
		if i > 0 && took[i]["etag_before"] != took[i-1]["etag_after"] {
			t.Errorf("write %d: etag_before %v is not the previous write's etag_after %v", i, took[i]["etag_before"], took[i-1]["etag_after"])
		}
	}
	if last := took[len(took)-1]["etag_after"]; last != e.record("lost").Etag {
		t.Errorf("the last audited etag %v is not the record's %s", last, e.record("lost").Etag)
	}
}

// TestApplyLostAnswerResolved: deltasync apply of a saved plan whose
// updateTable answer is lost after the server applied it (the connection
// cut; the resend's 409) reports the table applied and audits it synced
// with the server's etag after; one cut before it reached the server is
// not applied and audited not_applied. Before, the first was refused as
// stale (the resend's 409), with no etag_after, though the server had it.
func TestApplyLostAnswerResolved(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, table := range []string{"a", "b"} {
		e.register("log-replay-latest-metadata-protocol", table, -1)
		e.divergeCatalog(table, map[string]string{"stray": "x"})
	}
	rep := e.reconciler([]sync.Rule{{Include: []string{e.catalog + ".s.*"}}}, func(o *sync.Options) { o.DryRun = true }).Sync(ctx)
	sp := sync.NewSavedPlan(rep, e.client.BaseURL(), kindOfURL(e.client.BaseURL()), "test", time.Now())
	if len(sp.Tables) != 2 {
		t.Fatalf("saved plan has %d tables, want 2", len(sp.Tables))
	}
	px := newLossyProxy(t, e.client.BaseURL())
	base, _ := url.Parse(e.client.BaseURL())
	proxied, err := uc.New(px.srv.URL+base.Path, uc.Options{
		Retry: uc.RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	px.arm(loss{kind: cutAfter}, loss{}, loss{kind: cutBefore}, loss{kind: cutBefore}) // a: cut after, its resend passes; b: both attempts cut
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(audit.Options{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	ar := change.Apply(ctx, change.ApplyOptions{Catalog: kindOf(proxied), Audit: change.AuditOptions{Writer: aw, Command: "apply", Version: "test"}}, sp)
	_ = aw.Close()
	recs := readAudit(t, auditPath)
	if len(ar.Results) != 2 || len(recs) != 2 {
		t.Fatalf("%d results, %d audit records, want 2 each", len(ar.Results), len(recs))
	}
	first, second := sp.Tables[0], sp.Tables[1]
	firstName, _ := catalog.ParseTableName(first.Table)
	secondName, _ := catalog.ParseTableName(second.Table)
	got := e.record(firstName.Table)
	if r := ar.Results[0]; r.Outcome != audit.OutcomeSynced || r.EtagAfter != got.Etag {
		t.Errorf("%s (cut after apply): %s %q etag_after %q; want synced, the server's %s", first.Table, r.Outcome, r.Reason, r.EtagAfter, got.Etag)
	}
	if recs[0]["outcome"] != "synced" || recs[0]["etag_before"] != first.Etag || recs[0]["etag_after"] != got.Etag {
		t.Errorf("audit of %s: %v; want synced %s → %s", first.Table, recs[0], first.Etag, got.Etag)
	}
	if got := e.record(secondName.Table); got.Etag != second.Etag {
		t.Fatalf("%s: the write cut before the server moved its etag", second.Table)
	}
	if r := ar.Results[1]; r.Outcome != audit.OutcomeNotApplied || r.EtagAfter != "" {
		t.Errorf("%s (cut before): %s %q; want not_applied", second.Table, r.Outcome, r.Reason)
	}
	if recs[1]["outcome"] != "not_applied" || recs[1]["etag_before"] != second.Etag || recs[1]["etag_after"] != nil {
		t.Errorf("audit of %s: %v; want not_applied from %s", second.Table, recs[1], second.Etag)
	}
	if strings.Join(ar.NotApplied(), ",") != second.Table {
		t.Errorf("not applied: %v, want %s", ar.NotApplied(), second.Table)
	}
}
