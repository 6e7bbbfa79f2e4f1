//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/deltasync/deltasync/internal/testenv"
)

// End to end with a real Prometheus server: it scrapes a running deltasync
// and evaluates the deploy team's alert rules (deploy/monitoring/alerts.yaml,
// expressions unchanged, every `for:` shortened to 1s), and the drift alert
// fires for the watch-only table that stays out of sync. Prometheus comes
// from .ci/setup-prometheus.sh, which sets DELTASYNC_PROMETHEUS.

const outOfSyncAlert = "DeltasyncTableOutOfSync"

func TestPrometheusAlertFiresOnDrift(t *testing.T) {
	bin := externalTool(t, "DELTASYNC_PROMETHEUS", "setup-prometheus.sh")
	d := startDaemon(t)
	prom := startPrometheus(t, bin, d.addr)

	ok, why := e2ePoll(t.Context(), 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		var targets struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		}
		if err := prom.api("/api/v1/targets", &targets); err != nil {
			return false, err.Error()
		}
		for _, tg := range targets.ActiveTargets {
			if tg.Labels["job"] == "deltasync" && tg.Labels["instance"] == d.addr && tg.Health == "up" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("targets: %+v", targets.ActiveTargets)
	})
	if !ok {
		t.Fatalf("Prometheus did not scrape deltasync within 60s: %s\nprometheus log:\n%s", why, prom.log)
	}

	var firing []promAlert
	ok, why = e2ePoll(t.Context(), 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		var alerts struct {
			Alerts []promAlert `json:"alerts"`
		}
		if err := prom.api("/api/v1/alerts", &alerts); err != nil {
			return false, err.Error()
		}
		firing = alerts.Alerts
		for _, a := range alerts.Alerts {
			if a.Labels["alertname"] == outOfSyncAlert && a.Labels["table"] == watchedTable && a.State == "firing" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("alerts: %+v", alerts.Alerts)
	})
	if !ok {
		t.Fatalf("%s{table=%q} not firing within 60s: %s\nprometheus log:\n%s\ndeltasync log:\n%s",
			outOfSyncAlert, watchedTable, why, prom.log, d.stderr)
	}
	for _, a := range firing {
		if a.Labels["alertname"] != outOfSyncAlert {
			continue
		}
		for _, tb := range daemonTables {
			if tb.name == a.Labels["table"] && tb.want == "Synced" {
				t.Errorf("%s is %s for %s, which is in sync", outOfSyncAlert, a.State, tb.name)
			}
		}
		if a.Labels["table"] == watchedTable {
			t.Logf("%s %s: %v (value %s)", outOfSyncAlert, a.State, a.Labels, a.Value)
			if a.Labels["job"] != "deltasync" || a.Labels["instance"] != d.addr || a.Labels["severity"] != "warning" {
				t.Errorf("%s labels = %v, want job deltasync, instance %s, severity warning", outOfSyncAlert, a.Labels, d.addr)
			}
		}
	}
}

// promAlert is one alert of Prometheus's GET /api/v1/alerts.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
	Value  string            `json:"value"`
}

// promServer is a running Prometheus server.
type promServer struct {
	base string
	log  *lockedBuffer
}

// api GETs a Prometheus API path and decodes its "data" into out.
func (p *promServer) api(path string, out any) error {
	code, body, err := e2eGet(p.base+path, "")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s %s", path, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// startPrometheus runs Prometheus scraping target every second with the
// shortened alert rules, waits until it is ready and stops it in t.Cleanup.
func startPrometheus(t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	rules := filepath.Join(dir, "alerts.yaml")
	if err := os.WriteFile(rules, shortenedAlertRules(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := yaml.Marshal(map[string]any{
		"global":     map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
		"rule_files": []string{rules},
		"scrape_configs": []any{map[string]any{
			"job_name":       "deltasync",
			"static_configs": []any{map[string]any{"targets": []string{target}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	p := &promServer{base: "http://" + addr, log: &lockedBuffer{}}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			t.Logf("prometheus stopped: %v", err)
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Logf("prometheus killed: %v", <-exited)
		}
	})
	ok, why := e2ePoll(t.Context(), 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prometheus exited early (%v):\n%s", err, p.log)
		default:
		}
		code, body, err := e2eGet(p.base+"/-/ready", "")
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK, fmt.Sprintf("/-/ready: %d %s", code, body)
	})
	if !ok {
		t.Fatalf("prometheus not ready within 30s: %s\n%s", why, p.log)
	}
	return p
}

// shortenedAlertRules returns deploy/monitoring/alerts.yaml with every
// rule's `for:` set to 1s. Expressions and thresholds are kept as they are:
// with a cycle every second, "out of sync for more than 3 cycles" is reached
// within seconds.
func shortenedAlertRules(t *testing.T) []byte {
	t.Helper()
	src := filepath.Join("..", "..", "deploy", "monitoring", "alerts.yaml")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &doc); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	found := false
	for _, g := range doc.Groups {
		rules, _ := g["rules"].([]any)
		for _, r := range rules {
			rule, ok := r.(map[string]any)
			if !ok {
				t.Fatalf("%s: a rule is not a mapping: %v", src, r)
			}
			if _, ok := rule["for"]; ok {
				rule["for"] = "1s"
			}
			if rule["alert"] == outOfSyncAlert {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("%s has no %s rule", src, outOfSyncAlert)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(out)
}
