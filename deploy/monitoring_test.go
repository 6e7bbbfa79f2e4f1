package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/internal/testenv"
)

const (
	alertsPath     = "monitoring/alerts.yaml"
	alertTestsPath = "monitoring/alerts_test.yaml"
	dashboardPath  = "monitoring/dashboard.json"
)

// requiredAlerts are the alerts operators were promised.
var requiredAlerts = []string{
	"DeltasyncTableOutOfSync", "DeltasyncSyncFailures", "DeltasyncNoSuccessfulCycle",
	"DeltasyncAbsent", "DeltasyncCatalogErrorsRising", "DeltasyncStorageErrorsRising",
	"DeltasyncUpdatesRefused", "DeltasyncStorageThrottled", "DeltasyncLogReadsWaitingForMemory",
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Record      string            `json:"record"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

type ruleTestFile struct {
	Tests []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			EvalTime  string           `json:"eval_time"`
			AlertName string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// runbooksPath holds a "## <Alert>" runbook section for every alert.
const runbooksPath = "../docs/operating/alerts.md"

func TestAlertRules(t *testing.T) {
	var rf ruleFile
	if err := yaml.UnmarshalStrict([]byte(readFile(t, alertsPath)), &rf); err != nil {
		t.Fatalf("%s: %v", alertsPath, err)
	}
	readme := readFile(t, runbooksPath)
	seen := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if seen[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if sev := r.Labels["severity"]; sev != "warning" && sev != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, sev)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			// Runbook-style: what it means, how to investigate, what to do.
			for _, part := range []string{"What it means:", "Investigate:", "Act:"} {
				if !strings.Contains(r.Annotations["description"], part) {
					t.Errorf("%s: description lacks %q", r.Alert, part)
				}
			}
			anchor := strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], "docs/operating/alerts.md#"+anchor) ||
				!strings.Contains(readme, "\n## "+r.Alert+"\n") {
				t.Errorf("%s: runbook_url %q must point at a `## %s` section of docs/operating/alerts.md", r.Alert, r.Annotations["runbook_url"], r.Alert)
			}
			for _, p := range checkQuery(r.Expr) {
				t.Errorf("%s: %s", r.Alert, p)
			}
		}
	}
	for _, a := range requiredAlerts {
		if !seen[a] {
			t.Errorf("missing alert %s", a)
		}
	}

	// Every alert has a promtool unit test where it fires and one where it
	// stays silent.
	var tf ruleTestFile
	if err := yaml.Unmarshal([]byte(readFile(t, alertTestsPath)), &tf); err != nil {
		t.Fatalf("%s: %v", alertTestsPath, err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tf.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.AlertName] = true
			} else {
				silent[at.AlertName] = true
			}
		}
	}
	for a := range seen {
		if !fires[a] || !silent[a] {
			t.Errorf("%s: alerts_test.yaml needs a firing case (has: %v) and a not-firing case (has: %v)", a, fires[a], silent[a])
		}
	}
}

// promtool returns the promtool path from DELTASYNC_PROMTOOL (set by
// .ci/setup-prometheus.sh), skipping without it unless CI requires it.
func promtool(t *testing.T) string {
	t.Helper()
	return testenv.Getenv(t, "DELTASYNC_PROMTOOL", testenv.External,
		"DELTASYNC_PROMTOOL not set (eval \"$(bash .ci/setup-prometheus.sh start)\")")
}

func runPromtool(t *testing.T, tool, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Errorf("promtool %s: %v", strings.Join(args, " "), err)
	}
}

func TestPromtoolRules(t *testing.T) {
	tool := promtool(t)
	runPromtool(t, tool, "monitoring", "check", "rules", "alerts.yaml")
	runPromtool(t, tool, "monitoring", "test", "rules", "alerts_test.yaml")
}

type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []dashPanel `json:"panels"`
}

type dashPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	GridPos *struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"` // collapsed rows
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal([]byte(readFile(t, dashboardPath)), &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want all set, schemaVersion >= 36", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["table"] != "query" || vars["datasource"] != "datasource" {
		t.Errorf("templating variables %v: want a `table` query variable and a `datasource` variable", vars)
	}

	var all []dashPanel
	for _, p := range d.Panels {
		all = append(append(all, p), p.Panels...)
	}
	ids := map[int]string{}
	type rect struct {
		title      string
		x, y, w, h int
	}
	var rects []rect
	var exprs []string
	for _, p := range all {
		if p.ID <= 0 {
			t.Errorf("panel %q: id %d", p.Title, p.ID)
		} else if prev, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.GridPos == nil || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.Y < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v missing or outside the 24-column grid", p.Title, p.GridPos)
			continue
		}
		g := p.GridPos
		for _, r := range rects {
			if g.X < r.x+r.w && r.x < g.X+g.W && g.Y < r.y+r.h && r.y < g.Y+g.H {
				t.Errorf("panels %q and %q overlap", r.title, p.Title)
			}
		}
		rects = append(rects, rect{p.Title, g.X, g.Y, g.W, g.H})
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource must be ${datasource} so the dashboard imports anywhere", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no targets", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if refs[tg.RefID] || tg.RefID == "" {
				t.Errorf("panel %q: refId %q empty or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q: empty expr", p.Title)
			}
			for _, prob := range checkQuery(tg.Expr) {
				t.Errorf("panel %q: %s", p.Title, prob)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	// The panels operators were promised, by the metric each must query.
	joined := strings.Join(exprs, "\n")
	for _, want := range []string{
		"count by (sync_status) (deltasync_table_info", "sum by (kind) (deltasync_table_drift",
		"deltasync_table_log_version", "deltasync_table_catalog_version", "deltasync_cycle_duration_seconds_bucket",
		"deltasync_errors_total", "deltasync_catalog_requests_total", "deltasync_catalog_request_duration_seconds_bucket",
		"deltasync_storage_requests_total", "deltasync_storage_request_duration_seconds_bucket",
		"deltasync_last_successful_cycle_timestamp_seconds",
		"sum by (bucket) (rate(deltasync_storage_throttled_total", "deltasync_storage_backoff_seconds",
		"deltasync_log_read_memory_wait_seconds_total", "deltasync_log_read_memory_limit_bytes",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no panel queries %s", want)
		}
	}
}

// grafanaVars are the dashboard variables with a value PromQL accepts.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h",
	"$datasource", "x", "$job", ".*", "$instance", ".*", "$table", ".*",
)

// TestPromtoolDashboardQueries parses every dashboard query with promtool,
// as recording rules (the dashboard's variables filled in).
func TestPromtoolDashboardQueries(t *testing.T) {
	tool := promtool(t)
	d := loadDashboard(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	var all []dashPanel
	for _, p := range d.Panels {
		all = append(append(all, p), p.Panels...)
	}
	for _, p := range all {
		for _, tg := range p.Targets {
			n++
			expr := grafanaVars.Replace(tg.Expr)
			if m := regexp.MustCompile(`\$\w+`).FindString(expr); m != "" {
				t.Errorf("panel %q: variable %s has no test value", p.Title, m)
			}
			q, _ := json.Marshal(expr)
			fmt.Fprintf(&b, "      - record: dashboard:panel_%d:%s\n        expr: %s\n", p.ID, strings.ToLower(tg.RefID), q)
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, tool, ".", "check", "rules", path)
	if n == 0 {
		t.Errorf("no dashboard queries found")
	}
}
