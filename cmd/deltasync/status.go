package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deltasync/deltasync/internal/textfmt"
	"github.com/deltasync/deltasync/sync"
)

// The status page: a small read-only HTML view of the reconciler's table
// statuses, served at "/" by `deltasync run`. It is rendered on the server
// with html/template (every value is escaped), has no JavaScript and loads
// nothing from elsewhere, so a strict Content-Security-Policy applies.

// newStatusHandler serves the page from status, the reconciler's Status.
func newStatusHandler(status func() []sync.TableStatus) http.Handler {
	return &statusHandler{status: status, now: time.Now}
}

//go:embed templates/status.html
var statusHTML string

var statusTemplate = template.Must(template.New("status.html").Parse(statusHTML))

// statusRefresh is how often the page reloads itself (meta refresh).
const statusRefresh = 30 * time.Second

// statusHandler renders the status page from a fresh Status snapshot on
// every request.
type statusHandler struct {
	status func() []sync.TableStatus
	now    func() time.Time
}

func (h *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	view := newStatusView(h.status(), h.now())
	var buf bytes.Buffer
	if err := statusTemplate.Execute(&buf, view); err != nil {
		http.Error(w, "rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// statusView is what the template renders.
type statusView struct {
	Rendered       string // UTC, for people
	RenderedISO    string // RFC 3339, for <time datetime>
	RefreshSeconds int
	Total          int
	Counts         []statusCount // one per status, always all three
	Rows           []statusRow   // problems first
}

// statusCount is one "Synced 3" badge of the header.
type statusCount struct {
	Status string
	Class  string
	N      int
}

// statusRow is one table, with every value already formatted.
type statusRow struct {
	Table  string
	Type   string
	Mode   string
	Status string
	Class  string // CSS class of the status: synced, outofsync, unknown
	// Outcome is the last result's outcome ("registered", "flagged:
	// conflict"); Registration is set for the register phase's outcomes
	// (registered, would_register, already_registered, orphaned) and for
	// a flagged or failed registration.
	Outcome         string
	Registration    bool
	Drift           []string
	LogVersion      string
	CatalogVersion  string
	Lag             string
	Lagging         bool
	LastSync        statusTime
	LastCycle       statusTime
	LastError       string
	Reason          string // shown when it says more than LastError
	OutOfSyncCycles int
	Failures        int
	NextAttempt     statusTime
	// Refused: the catalog refused the table's update (Failures times).
	Refused bool
	// Held is what the table is held for ("destructive"), "" when not.
	Held string
}

// statusTime is a timestamp shown as "12s ago" with the exact time in the
// title and datetime attributes; Never is set for the zero time.
type statusTime struct {
	Never bool
	Ago   string
	Exact string
	ISO   string
}

// statusOrder ranks statuses for sorting, problems first. A table without a
// status yet (not reconciled) counts as Unknown.
var statusOrder = map[sync.Status]int{sync.StatusUnknown: 0, sync.StatusOutOfSync: 1, sync.StatusSynced: 2}

func statusOf(s sync.TableStatus) sync.Status {
	if _, ok := statusOrder[s.Status]; ok {
		return s.Status
	}
	return sync.StatusUnknown
}

// newStatusView builds the page for statuses at now. It does not modify
// statuses. Rows are sorted Unknown, OutOfSync, Synced; within a status the
// longest out of sync first, then by failures, then by name.
func newStatusView(statuses []sync.TableStatus, now time.Time) statusView {
	sorted := append([]sync.TableStatus(nil), statuses...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ra, rb := statusOrder[statusOf(a)], statusOrder[statusOf(b)]; ra != rb {
			return ra < rb
		}
		if a.OutOfSyncCycles != b.OutOfSyncCycles {
			return a.OutOfSyncCycles > b.OutOfSyncCycles
		}
		if a.Failures != b.Failures {
			return a.Failures > b.Failures
		}
		return a.Table < b.Table
	})
	n := map[sync.Status]int{}
	v := statusView{
		Rendered:       now.UTC().Format("2006-01-02 15:04:05 UTC"),
		RenderedISO:    now.UTC().Format(time.RFC3339),
		RefreshSeconds: int(statusRefresh / time.Second),
		Total:          len(sorted),
		Rows:           make([]statusRow, 0, len(sorted)),
	}
	for _, s := range sorted {
		n[statusOf(s)]++
		v.Rows = append(v.Rows, newStatusRow(s, now))
	}
	for _, st := range []sync.Status{sync.StatusUnknown, sync.StatusOutOfSync, sync.StatusSynced} {
		v.Counts = append(v.Counts, statusCount{Status: string(st), Class: statusClass(st), N: n[st]})
	}
	return v
}

func newStatusRow(s sync.TableStatus, now time.Time) statusRow {
	st := statusOf(s)
	row := statusRow{
		Table:           s.Table,
		Type:            textfmt.OrDash(s.Type),
		Mode:            textfmt.OrDash(string(s.Mode)),
		Status:          string(st),
		Class:           statusClass(st),
		LogVersion:      versionText(s.LogVersion),
		CatalogVersion:  versionText(s.CatalogVersion),
		Lag:             textfmt.Dash,
		LastSync:        newStatusTime(s.LastSync, now),
		LastCycle:       newStatusTime(s.LastCycle, now),
		LastError:       s.LastError,
		OutOfSyncCycles: s.OutOfSyncCycles,
		Failures:        s.Failures,
		NextAttempt:     newStatusTime(s.NextAttempt, now),
		Refused:         s.ErrorReason == sync.ReasonRefused,
		Outcome:         outcomeText(s),
		Registration:    isRegistration(s),
		Held:            s.Held,
	}
	for _, k := range s.Drift {
		row.Drift = append(row.Drift, string(k))
	}
	if s.LogVersion != nil && s.CatalogVersion != nil {
		lag := *s.LogVersion - *s.CatalogVersion
		row.Lag, row.Lagging = strconv.FormatInt(lag, 10), lag != 0
	}
	switch {
	case s.Reason != "" && !strings.Contains(s.LastError, s.Reason):
		row.Reason = s.Reason
	case s.LastCycle.IsZero() && s.LastError == "":
		row.Reason = "not reconciled yet"
	}
	return row
}

// outcomeText is the outcome with the error reason of a flagged or
// failed one ("flagged: missing_schema").
func outcomeText(s sync.TableStatus) string {
	if s.Outcome == "" {
		return textfmt.Dash
	}
	if s.ErrorReason != "" && (s.Outcome == sync.OutcomeFlagged || s.Outcome == sync.OutcomeFailed) {
		return string(s.Outcome) + ": " + string(s.ErrorReason)
	}
	return string(s.Outcome)
}

// isRegistration reports whether the outcome is the register phase's: a
// table found in storage (or a record whose log is gone).
func isRegistration(s sync.TableStatus) bool {
	switch s.Outcome {
	case sync.OutcomeRegistered, sync.OutcomeWouldRegister, sync.OutcomeAlreadyRegistered, sync.OutcomeOrphaned:
		return true
	}
	return s.ErrorReason == sync.ReasonMissingSchema
}

func statusClass(s sync.Status) string { return strings.ToLower(string(s)) }

func versionText(v *int64) string {
	if v == nil {
		return textfmt.Dash
	}
	return strconv.FormatInt(*v, 10)
}

func newStatusTime(t, now time.Time) statusTime {
	if t.IsZero() {
		return statusTime{Never: true}
	}
	return statusTime{
		Ago:   ago(now.Sub(t)),
		Exact: t.UTC().Format("2006-01-02 15:04:05 UTC"),
		ISO:   t.UTC().Format(time.RFC3339),
	}
}

// ago renders a duration the way people read it: "just now", "42s ago",
// "5m ago", "3h ago", "2d ago"; a time in the future is "in 30s".
func ago(d time.Duration) string {
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		s = fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}
