package main

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/sync"
	"github.com/deltasync/deltasync/sync/plan"
)

var statusNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func int64Ptr(v int64) *int64 { return &v }

// statusFixture has one table of every status, given in name order (as
// Reconciler.Status returns them).
func statusFixture() []sync.TableStatus {
	return []sync.TableStatus{
		{Table: "main.sales.a_synced", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusSynced,
			Outcome: sync.OutcomeUnchanged, LogVersion: int64Ptr(12), CatalogVersion: int64Ptr(12),
			LastSync: statusNow.Add(-30 * time.Second), LastCycle: statusNow.Add(-30 * time.Second)},
		{Table: "main.sales.b_drift", Type: "EXTERNAL", Mode: sync.ModeWarn, Status: sync.StatusOutOfSync,
			Outcome: sync.OutcomeFlagged, Drift: []plan.DriftKind{plan.KindSchema, plan.KindProperties},
			Reason: "mode warn: drift is flagged, never written", LogVersion: int64Ptr(7), CatalogVersion: int64Ptr(5),
			LastSync: statusNow.Add(-3 * time.Hour), LastCycle: statusNow.Add(-time.Minute), OutOfSyncCycles: 2},
		{Table: "main.sales.c_broken", Type: "", Mode: sync.ModeSync, Status: sync.StatusUnknown,
			Outcome: sync.OutcomeFailed, Reason: "catalog: 503", LastError: "catalog: 503",
			LastCycle: statusNow.Add(-time.Minute), OutOfSyncCycles: 1, Failures: 3,
			NextAttempt: statusNow.Add(90 * time.Second)},
		{Table: "main.sales.d_drift_longer", Type: "MANAGED", Mode: sync.ModeSync, Status: sync.StatusOutOfSync,
			Outcome: sync.OutcomeFlagged, Drift: []plan.DriftKind{plan.KindComment}, LogVersion: int64Ptr(3), CatalogVersion: int64Ptr(3),
			LastCycle: statusNow.Add(-time.Minute), OutOfSyncCycles: 9},
		{Table: "main.sales.e_new"}, // selected, not reconciled yet
	}
}

func TestStatusViewOrderAndCounts(t *testing.T) {
	tests := []struct {
		name       string
		in         []sync.TableStatus
		wantOrder  []string
		wantCounts []statusCount
	}{
		{
			name:      "problems first",
			in:        statusFixture(),
			wantOrder: []string{"main.sales.c_broken", "main.sales.e_new", "main.sales.d_drift_longer", "main.sales.b_drift", "main.sales.a_synced"},
			wantCounts: []statusCount{
				{Status: "Unknown", Class: "unknown", N: 2},
				{Status: "OutOfSync", Class: "outofsync", N: 2},
				{Status: "Synced", Class: "synced", N: 1},
			},
		},
		{
			name: "empty",
			wantCounts: []statusCount{
				{Status: "Unknown", Class: "unknown"}, {Status: "OutOfSync", Class: "outofsync"}, {Status: "Synced", Class: "synced"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newStatusView(tt.in, statusNow)
			var order []string
			for _, r := range v.Rows {
				order = append(order, r.Table)
			}
			if diff := cmp.Diff(tt.wantOrder, order); diff != "" {
				t.Errorf("row order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCounts, v.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if v.Total != len(tt.in) {
				t.Errorf("Total = %d, want %d", v.Total, len(tt.in))
			}
		})
	}
}

func TestStatusViewRow(t *testing.T) {
	v := newStatusView(statusFixture(), statusNow)
	rows := map[string]statusRow{}
	for _, r := range v.Rows {
		rows[r.Table] = r
	}
	tests := []struct {
		table string
		want  statusRow
	}{
		{"main.sales.b_drift", statusRow{
			Table: "main.sales.b_drift", Type: "EXTERNAL", Mode: "warn", Status: "OutOfSync", Class: "outofsync", Outcome: "flagged",
			Drift: []string{"schema", "properties"}, LogVersion: "7", CatalogVersion: "5", Lag: "2", Lagging: true,
			LastSync:        statusTime{Ago: "3h ago", Exact: "2026-11-30 09:00:00 UTC", ISO: "2026-11-30T09:00:00Z"},
			LastCycle:       statusTime{Ago: "1m ago", Exact: "2026-11-30 11:59:00 UTC", ISO: "2026-11-30T11:59:00Z"},
			Reason:          "mode warn: drift is flagged, never written",
			OutOfSyncCycles: 2, NextAttempt: statusTime{Never: true},
		}},
		{"main.sales.c_broken", statusRow{
			Table: "main.sales.c_broken", Type: "—", Mode: "sync", Status: "Unknown", Class: "unknown", Outcome: "failed",
			LogVersion: "—", CatalogVersion: "—", Lag: "—",
			LastSync:  statusTime{Never: true},
			LastCycle: statusTime{Ago: "1m ago", Exact: "2026-11-30 11:59:00 UTC", ISO: "2026-11-30T11:59:00Z"},
			LastError: "catalog: 503", OutOfSyncCycles: 1, Failures: 3,
			NextAttempt: statusTime{Ago: "in 1m", Exact: "2026-11-30 12:01:30 UTC", ISO: "2026-11-30T12:01:30Z"},
		}},
		{"main.sales.e_new", statusRow{
			Table: "main.sales.e_new", Type: "—", Mode: "—", Status: "Unknown", Class: "unknown", Outcome: "—",
			LogVersion: "—", CatalogVersion: "—", Lag: "—",
			LastSync: statusTime{Never: true}, LastCycle: statusTime{Never: true}, NextAttempt: statusTime{Never: true},
			Reason: "not reconciled yet",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, rows[tt.table]); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusAgo(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{42 * time.Second, "42s ago"},
		{5*time.Minute + 59*time.Second, "5m ago"},
		{3 * time.Hour, "3h ago"},
		{72 * time.Hour, "3d ago"},
		{-30 * time.Second, "in 30s"},
	}
	for _, tt := range tests {
		if got := ago(tt.d); got != tt.want {
			t.Errorf("ago(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// getStatusPage serves the page for statuses and returns the response.
func getStatusPage(t *testing.T, statuses []sync.TableStatus) (*http.Response, string) {
	t.Helper()
	h := &statusHandler{status: func() []sync.TableStatus { return statuses }, now: func() time.Time { return statusNow }}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestStatusPageEscapesHostileValues(t *testing.T) {
	const (
		hostileName  = `main.x.<script>alert("name")</script>`
		hostileError = `boom"><img src=x onerror=alert(1)> & </td></tr><script>alert('err')</script>`
		hostileType  = `EXTERNAL<b>`
	)
	resp, body := getStatusPage(t, []sync.TableStatus{{
		Table: hostileName, Type: hostileType, Mode: "warn", Status: sync.StatusUnknown,
		Drift: []plan.DriftKind{`<i>schema</i>`}, LastError: hostileError, Reason: `<u>why</u>`,
	}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, bad := range []string{"<script", "<img", "<b>", "<i>", "<u>"} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains unescaped %q", bad)
		}
	}
	for _, want := range []string{
		`main.x.&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;`,
		`boom&#34;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &lt;/td&gt;&lt;/tr&gt;&lt;script&gt;alert(&#39;err&#39;)&lt;/script&gt;`,
		`EXTERNAL&lt;b&gt;`,
		`&lt;i&gt;schema&lt;/i&gt;`,
		`&lt;u&gt;why&lt;/u&gt;`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks escaped %q", want)
		}
	}
}

func TestStatusPageHTML(t *testing.T) {
	resp, body := getStatusPage(t, statusFixture())
	wantHeaders := map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	}
	for k, want := range wantHeaders {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q, want default-src 'none'", csp)
	}

	// Rows in problem-first order, each with its status.
	rowRE := regexp.MustCompile(`<tr class="row-(\w+)" data-table="([^"]*)" data-status="(\w+)">`)
	var got [][2]string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		if m[1] != strings.ToLower(m[3]) {
			t.Errorf("row %s: class row-%s for status %s", m[2], m[1], m[3])
		}
		got = append(got, [2]string{m[2], m[3]})
	}
	want := [][2]string{
		{"main.sales.c_broken", "Unknown"},
		{"main.sales.e_new", "Unknown"},
		{"main.sales.d_drift_longer", "OutOfSync"},
		{"main.sales.b_drift", "OutOfSync"},
		{"main.sales.a_synced", "Synced"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	for _, s := range []string{
		`<span class="count total">5 tables</span>`,
		`<span class="count unknown" title="tables Unknown">Unknown 2</span>`,
		`<span class="count outofsync" title="tables OutOfSync">OutOfSync 2</span>`,
		`<span class="count synced" title="tables Synced">Synced 1</span>`,
		`<time datetime="2026-11-30T12:00:00Z">2026-11-30 12:00:00 UTC</time>`,
		`<meta http-equiv="refresh" content="30">`,
		`<span class="kind">schema</span><span class="kind">properties</span>`,
		`<td class="num lagging">2</td>`,
		`3 failure(s) in a row; next try <time datetime="2026-11-30T12:01:30Z" title="2026-11-30 12:01:30 UTC">in 1m</time>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(strings.ToLower(body), "<script") {
		t.Error("page has a <script>; it must work without JavaScript")
	}
}

func TestStatusPageEmpty(t *testing.T) {
	_, body := getStatusPage(t, nil)
	if !strings.Contains(body, "No tables yet") {
		t.Errorf("empty page lacks the no-tables note:\n%s", body)
	}
	if strings.Contains(body, "<table>") {
		t.Error("empty page renders a table")
	}
}

// TestStatusPageServedByRun checks the daemon's mux: "/" is the HTML page.
func TestStatusPageServedByRun(t *testing.T) {
	client, err := uc.New("http://127.0.0.1:1/api/2.1/unity-catalog", uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := sync.NewSelector([]sync.Rule{{Include: []string{"cat.*.*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sync.New(sync.Options{Catalog: kindOf(client), Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	h := (&app{registry: prometheus.NewRegistry(), rec: rec}).handler()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	if got := w.Header().Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if w.Body.Len() != 0 {
		t.Errorf("HEAD returned a body of %d bytes", w.Body.Len())
	}
}

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestStatusPageGolden compares the whole page for the fixture with
// testdata/status.golden.html (go test -run StatusPageGolden -update).
func TestStatusPageGolden(t *testing.T) {
	_, body := getStatusPage(t, statusFixture())
	golden := filepath.Join("testdata", "status.golden.html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), body); diff != "" {
		t.Errorf("status page differs from %s (-want +got); rerun with -update if intended:\n%s", golden, diff)
	}
}

// A table whose update the catalog refused says so, with when it is tried
// again (a long backoff), not that it failed.
func TestStatusPageRefused(t *testing.T) {
	now := statusNow
	_, body := getStatusPage(t, []sync.TableStatus{{
		Table: "main.sales.refused", Status: sync.StatusOutOfSync, Outcome: sync.OutcomeFlagged, ErrorReason: sync.ReasonRefused,
		LastError: "refused by the catalog (HTTP 400 InvalidParameterValueException: Duplicate field name)", Failures: 2,
		NextAttempt: now.Add(2 * time.Hour), LastCycle: now,
	}})
	for _, s := range []string{"refused by the catalog 2 time(s) in a row; next try", "Duplicate field name"} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(body, "failure(s) in a row") {
		t.Error("a refusal is shown as failures")
	}
}

// TestStatusPageRegistrationOutcomes: the register phase's rows show
// their outcome (a flagged one with its reason) in the Outcome column,
// marked as registrations, and the reason in the detail column.
func TestStatusPageRegistrationOutcomes(t *testing.T) {
	at := statusNow.Add(-time.Minute)
	in := []sync.TableStatus{
		{Table: "main.sales.reg", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusSynced, Outcome: sync.OutcomeRegistered,
			LogVersion: int64Ptr(0), CatalogVersion: int64Ptr(0), LastCycle: at, LastSync: at},
		{Table: "main.sales.waits", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusOutOfSync, Outcome: sync.OutcomeWouldRegister,
			Reason: "waits for the next cycle: register.max_per_cycle (1) reached", LastCycle: at},
		{Table: "main.sales.moved", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusSynced, Outcome: sync.OutcomeAlreadyRegistered,
			Reason: "location s3://lake/w/sales/moved is already registered as main.sales.elsewhere: not registered again", LastCycle: at},
		{Table: "main.sales.gone", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusUnknown, Outcome: sync.OutcomeOrphaned,
			ErrorReason: sync.ReasonOrphaned, Reason: "orphaned: s3://lake/w/sales/gone holds no Delta log", LastCycle: at},
		{Table: "main.nosuch.orders", Mode: sync.ModeSync, Status: sync.StatusUnknown, Outcome: sync.OutcomeFlagged,
			ErrorReason: sync.ReasonMissingSchema, Reason: "schema main.nosuch does not exist", LastCycle: at},
		{Table: "main.sales.taken", Mode: sync.ModeSync, Status: sync.StatusUnknown, Outcome: sync.OutcomeFlagged,
			ErrorReason: sync.ReasonConflict, Reason: "main.sales.taken already exists at s3://other", LastCycle: at},
		{Table: "main.sales.kept", Type: "EXTERNAL", Mode: sync.ModeSync, Status: sync.StatusSynced, Outcome: sync.OutcomeUnchanged, LastCycle: at, LastSync: at},
	}
	_, body := getStatusPage(t, in)
	cellRE := regexp.MustCompile(`(?s)data-table="([^"]*)".*?<td class="(outcome(?: registration)?)">([^<]*)</td>`)
	got := map[string][2]string{}
	for _, m := range cellRE.FindAllStringSubmatch(body, -1) {
		got[m[1]] = [2]string{m[2], m[3]}
	}
	want := map[string][2]string{
		"main.sales.reg":     {"outcome registration", "registered"},
		"main.sales.waits":   {"outcome registration", "would_register"},
		"main.sales.moved":   {"outcome registration", "already_registered"},
		"main.sales.gone":    {"outcome registration", "orphaned"},
		"main.nosuch.orders": {"outcome registration", "flagged: missing_schema"},
		"main.sales.taken":   {"outcome", "flagged: conflict"},
		"main.sales.kept":    {"outcome", "unchanged"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome cells (-want +got):\n%s", diff)
	}
	for _, s := range []string{"register.max_per_cycle (1) reached", "already registered as main.sales.elsewhere",
		"holds no Delta log", "schema main.nosuch does not exist", "already exists at s3://other"} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks the reason %q", s)
		}
	}
	if !strings.Contains(body, `<th title="what the last reconcile or registration did">Outcome</th>`) {
		t.Error("page lacks the Outcome column header")
	}
}

// A table held for its destructive changes says so beside its status,
// with the held changes in its reason; a table not held has no badge.
func TestStatusPageHeld(t *testing.T) {
	now := statusNow
	_, body := getStatusPage(t, []sync.TableStatus{{
		Table: "main.sales.held", Status: sync.StatusOutOfSync, Outcome: sync.OutcomeFlagged, Held: sync.HeldDestructive,
		Reason: "held: destructive: column qty: remove; nothing sent (on_destructive: hold)", LastCycle: now,
	}, {
		Table: "main.sales.fine", Status: sync.StatusSynced, Outcome: sync.OutcomeUnchanged, LastCycle: now,
	}})
	if n := strings.Count(body, `<span class="status outofsync held"`); n != 1 {
		t.Errorf("%d held badges, want 1 (the held table's)\n%s", n, body)
	}
	for _, s := range []string{">held: destructive</span>", "column qty: remove"} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}
