package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// runCLI runs the binary's run function in-process.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	code = run(context.Background(), args, envList, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExampleConfigParsesStrictly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"UC_URL": "https://uc.example.com/api/2.1/unity-catalog"}
	cfg := defaultConfig()
	if err := parseConfigFile(data, env, &cfg); err != nil {
		t.Fatalf("example config: %v", err)
	}
	// Every key of the config struct appears in the example (commented or not).
	full, err := yaml.Marshal(config{Catalog: catalogConfig{OAuth: &oauthConfig{}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	_ = yaml.Unmarshal(full, &keys)
	var missing []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if !strings.Contains(string(data), k+":") {
				missing = append(missing, prefix+k)
			}
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", keys)
	for _, k := range []string{"token_file", "token_env", "ca_file", "heartbeat_url", "shard", "exclude", "mode", "url"} {
		if !strings.Contains(string(data), k+":") {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("config.example.yaml does not document: %v", missing)
	}
}

func TestCheckConfigAcceptsExample(t *testing.T) {
	dir := t.TempDir()
	tok := writeFile(t, dir, "token", "secret-token\n")
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := writeFile(t, dir, "c.yaml", strings.ReplaceAll(string(data), "/var/run/secrets/deltasync/uc-token", tok))
	code, out, errOut := runCLI(t, map[string]string{"UC_URL": "https://user:pw@uc.example.com/api/2.1/unity-catalog"},
		"check-config", "--config", cfgPath)
	if code != 0 {
		t.Fatalf("check-config exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(out, "pw@") || strings.Contains(out, "secret-token") {
		t.Errorf("effective config leaks a secret:\n%s", out)
	}
	if !strings.Contains(out, "main.sales.*") || !strings.Contains(out, "REDACTED") {
		t.Errorf("effective config incomplete:\n%s", out)
	}
}

func TestCheckConfigReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeFile(t, dir, "bad.yaml", `
catalog:
  url: ftp://uc.example.com
  token_file: /nonexistent/token
  token_env: ALSO_SET
tables:
  - include: ["a.b.c.d"]
    mode: push
credentials: magic
schedule: "every now and then"
concurrency: 0
read_concurrency: -1
backoff: {initial: 10s, max: 1s}
listen: "nonsense"
shard: 3/3
log: {format: xml, level: loud}
`)
	code, _, errOut := runCLI(t, nil, "check-config", "--config", cfgPath)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{"catalog.url", "token_file", "at most one", "more than three", `mode "push"`,
		"credentials", "schedule", "concurrency", "read_concurrency", "backoff", "listen", "shard", "log.format", "log.level"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("problems do not mention %q:\n%s", want, errOut)
		}
	}
}

func TestConfigUnknownKeyAndUnsetVar(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeFile(t, dir, "c.yaml", "catalog:\n  url: ${NOPE}\n  tokenfile: x\n")
	code, _, errOut := runCLI(t, nil, "check-config", "--config", cfgPath)
	if code != 1 || !strings.Contains(errOut, "NOPE") || !strings.Contains(errOut, `catalog.tokenfile: unknown key (did you mean catalog.token_file?)`) {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeFile(t, dir, "c.yaml", `
catalog: {url: "http://file/api/2.1/unity-catalog"}
tables: [{include: ["main.*.*"], mode: warn}]
schedule: "@every 5m"
concurrency: 2
log: {level: debug}
`)
	env := map[string]string{
		"DELTASYNC_SCHEDULE":    "@every 2m",
		"DELTASYNC_CONCURRENCY": "3",
		"DELTASYNC_LISTEN":      "127.0.0.1:1",
		"DELTASYNC_EXCLUDE":     "*.tmp_*,*.old_*",
	}
	code, out, errOut := runCLI(t, env, "check-config", "--config", cfgPath, "--listen", "127.0.0.1:2",
		"--catalog-url", "http://flag/api/2.1/unity-catalog", "--mode", "sync")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got config
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := defaultConfig()
	want.Catalog.URL = "http://flag/api/2.1/unity-catalog"                                                            // flag > file
	want.Tables = []tableRule{{Include: []string{"main.*.*"}, Exclude: []string{"*.tmp_*", "*.old_*"}, Mode: "sync"}} // env+flag
	want.Schedule = "@every 2m"                                                                                       // env > file
	want.Concurrency = 3                                                                                              // env > file
	want.Listen = "127.0.0.1:2"                                                                                       // flag > env
	want.Log.Level = "debug"                                                                                          // file > default
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective config (-want +got):\n%s", diff)
	}
}

func TestIncludeFlagReplacesRules(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "check-config", "--catalog-url", "http://h/api/2.1/unity-catalog",
		"--include", "a.b.*", "--include", "c.d.e", "--exclude", "a.b.x", "--mode", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got config
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := []tableRule{{Include: []string{"a.b.*", "c.d.e"}, Exclude: []string{"a.b.x"}, Mode: "warn"}}
	if diff := cmp.Diff(want, got.Tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

func TestDurationYAML(t *testing.T) {
	var c struct {
		D duration `json:"d"`
	}
	if err := yaml.UnmarshalStrict([]byte("d: 90s\n"), &c); err != nil || time.Duration(c.D) != 90*time.Second {
		t.Errorf("got %v, %v", time.Duration(c.D), err)
	}
	if err := yaml.UnmarshalStrict([]byte("d: 5\n"), &c); err == nil {
		t.Errorf("bare number accepted as duration")
	}
}

// TestEveryFlagReadsItsEnvVar: each flag of the config-reading commands
// takes DELTASYNC_<NAME> (loadConfig visits the command's flags, so a new
// flag cannot be forgotten), and DELTASYNC_HELP is not a setting.
func TestEveryFlagReadsItsEnvVar(t *testing.T) {
	for _, newCmd := range []func(*cli) *cobra.Command{newRunCommand, newOnceCommand, newPlanCommand, newCheckConfigCommand} {
		env := map[string]string{"DELTASYNC_HELP": "true"}
		c := &cli{stderr: io.Discard, env: env}
		cmd := newCmd(c)
		cmd.InitDefaultHelpFlag()
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			v := fl.DefValue
			if _, ok := fl.Value.(pflag.SliceValue); ok {
				v = "a.b.c,d.e.f"
			}
			if fl.Name != "help" {
				env[envName(fl.Name)] = v
			}
		})
		_, _ = c.loadConfig(cmd, &syncFlags{}) // the values need not make a valid config
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if changed := fl.Changed; changed != (fl.Name != "help") {
				t.Errorf("%s --%s: set from the environment = %v", cmd.Name(), fl.Name, changed)
			}
			if sv, ok := fl.Value.(pflag.SliceValue); ok && len(sv.GetSlice()) != 2 {
				t.Errorf("%s --%s: %q from a comma-separated env value, want 2 items", cmd.Name(), fl.Name, sv.GetSlice())
			}
		})
	}
}

// --max-cycle-duration (and DELTASYNC_MAX_CYCLE_DURATION) override the
// config file's max_cycle_duration; the sidecar passes 0s.
func TestMaxCycleDurationFlag(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "c.yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"a.*.*\"]}]\nmax_cycle_duration: 5m\n")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "max_cycle_duration: 5m0s"},
		{[]string{"--max-cycle-duration", "0s"}, nil, "max_cycle_duration: 0s"},
		{nil, map[string]string{"DELTASYNC_MAX_CYCLE_DURATION": "90s"}, "max_cycle_duration: 1m30s"},
	} {
		code, out, errOut := runCLI(t, tc.env, append([]string{"check-config", "--config", cfg}, tc.args...)...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q %v: exit %d, want %q in\n%s%s", tc.args, tc.env, code, tc.want, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, nil, "check-config", "--config", cfg, "--max-cycle-duration", "-1s"); code != 1 || !strings.Contains(errOut, "--max-cycle-duration: must not be negative") {
		t.Errorf("negative: exit %d\n%s", code, errOut)
	}
}

// TestTableRuleErrorsNameTheirKeys: sync reports a bad rule by its index
// and field (sync.RuleError); the config names it by its key.
func TestTableRuleErrorsNameTheirKeys(t *testing.T) {
	c := config{Tables: []tableRule{
		{Include: []string{"main.sales.*"}},
		{Include: []string{"a.b.c.d"}, Exclude: []string{"a..b"}, Mode: "push"},
	}}
	neg := config{Tables: []tableRule{{Include: []string{"main.sales.*"}}, {Include: []string{"!x.y.z"}}}}
	var msgs []string
	for _, e := range append(c.validateTables(), neg.validateTables()...) {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"tables[1].include: ", "more than three", "tables[1].exclude: ", "empty part",
		`tables[1]: mode "push"`, "tables[1]: only negated patterns; add an include"} {
		if !strings.Contains(all, want) {
			t.Errorf("validation does not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "rule 1") {
		t.Errorf("the library's own naming leaked into the config's errors:\n%s", all)
	}
}

func TestIgnoreFieldMetadataKey(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"a.*.*\"]}]\nignore_field_metadata: [\"x.stats.*\"]\n")
	if code, out, errOut := runCLI(t, nil, "check-config", "--config", good); code != 0 || !strings.Contains(out, "x.stats.*") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	bad := writeFile(t, dir, "bad.yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"a.*.*\"]}]\nignore_field_metadata: [\"x[\"]\n")
	if code, _, errOut := runCLI(t, nil, "check-config", "--config", bad); code != 1 || !strings.Contains(errOut, `ignore_field_metadata "x["`) {
		t.Errorf("bad glob: exit %d\n%s", code, errOut)
	}
}

func TestWatermarkUpdatesKey(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"every_cycle", "with_changes", "15m"} {
		cfg := writeFile(t, dir, v+".yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"a.*.*\"]}]\nwatermark_updates: "+v+"\n")
		if code, out, errOut := runCLI(t, nil, "check-config", "--config", cfg); code != 0 || !strings.Contains(out, "watermark_updates: "+v) {
			t.Errorf("%s: exit %d\n%s%s", v, code, out, errOut)
		}
	}
	bad := writeFile(t, dir, "bad.yaml", "catalog: {url: \"http://c/api/2.1/unity-catalog\"}\ntables: [{include: [\"a.*.*\"]}]\nwatermark_updates: sometimes\n")
	if code, _, errOut := runCLI(t, nil, "check-config", "--config", bad); code != 1 || !strings.Contains(errOut, "watermark_updates") {
		t.Errorf("bad value: exit %d\n%s", code, errOut)
	}
}

// TestTableRuleNeedsInclude: a tables[] rule without include selects
// nothing; check-config refuses it, naming the rule, instead of passing a
// config whose plan then finds no table.
func TestTableRuleNeedsInclude(t *testing.T) {
	path := writeFile(t, t.TempDir(), "deltasync.yaml",
		"catalog:\n  url: https://uc.example.com/api/2.1/unity-catalog\ntables:\n  - include: main.a.*\n  - mode: warn\n")
	code, _, errOut := runCLI(t, nil, "check-config", "--config", path)
	if code != 1 || !strings.Contains(errOut, "tables[1].include: required") {
		t.Errorf("check-config: exit %d, want 1 naming tables[1].include:\n%s", code, errOut)
	}
}
