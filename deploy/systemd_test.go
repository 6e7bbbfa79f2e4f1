package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const unitPath = "systemd/deltasync.service"

// parseUnit returns the unit's directives by "Section.Key", values in order.
func parseUnit(t *testing.T, src string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	section := ""
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a directive: %q", unitPath, i+1, line)
			}
			out[section+"."+strings.TrimSpace(k)] = append(out[section+"."+strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}

// TestSystemdUnitDirectives checks the unit's promises without systemd.
func TestSystemdUnitDirectives(t *testing.T) {
	u := parseUnit(t, readFile(t, unitPath))
	want := map[string]string{
		"Service.DynamicUser":           "yes",
		"Service.ProtectSystem":         "strict",
		"Service.ProtectHome":           "yes",
		"Service.NoNewPrivileges":       "yes",
		"Service.PrivateTmp":            "yes",
		"Service.PrivateDevices":        "yes",
		"Service.Restart":               "on-failure",
		"Service.LoadCredential":        "token:/etc/deltasync/token",
		"Service.CapabilityBoundingSet": "",
		"Install.WantedBy":              "multi-user.target",
	}
	for k, v := range want {
		got := u[k]
		if len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	exec := u["Service.ExecStart"]
	if len(exec) != 1 {
		t.Fatalf("ExecStart = %q, want one", exec)
	}
	for _, frag := range []string{" run ", "--config /etc/deltasync/config.yaml", "--token-file ${CREDENTIALS_DIRECTORY}/token"} {
		if !strings.Contains(exec[0], frag) {
			t.Errorf("ExecStart %q lacks %q", exec[0], frag)
		}
	}
}

// TestSystemdUnitVerify runs systemd-analyze verify and the offline security
// audit on the unit (with the binary path pointed at a stand-in executable,
// since verify checks that it exists). Skips where systemd-analyze is absent.
func TestSystemdUnitVerify(t *testing.T) {
	tool := os.Getenv("DELTASYNC_SYSTEMD_ANALYZE")
	if tool == "" {
		var err error
		if tool, err = exec.LookPath("systemd-analyze"); err != nil {
			t.Skip("systemd-analyze not found (apt-get install systemd, or set DELTASYNC_SYSTEMD_ANALYZE)")
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "deltasync")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(readFile(t, unitPath), "/usr/local/bin/deltasync", bin)
	path := filepath.Join(dir, "deltasync.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}

	out, err = exec.Command(tool, "security", "--offline=true", "--no-pager", path).CombinedOutput()
	if err != nil && strings.Contains(string(out), "--offline") {
		t.Skipf("systemd-analyze too old for security --offline: %s", out)
	}
	m := regexp.MustCompile(`Overall exposure level for deltasync\.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: no exposure level: %v\n%s", err, out)
	}
	level, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("systemd-analyze security exposure: %.1f", level)
	const maxExposure = 2.0 // systemd rates <= 2.0 "OK"
	if level > maxExposure {
		t.Errorf("exposure level %.1f > %.1f; the sandbox was weakened:\n%s", level, maxExposure, out)
	}
}
