package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltasync/deltasync/internal/testcorpus"
)

// Config problems are reported as the user wrote them, where they wrote
// them, all at once.
func TestConfigProblemsNameWhatAndWhere(t *testing.T) {
	dir := t.TempDir()
	malformed := writeFile(t, dir, "malformed.yaml", "catalog:\n  url: http://h/api/2.1/unity-catalog\n bad: [\n")
	code, _, errOut := runCLI(t, nil, "check-config", "--config", malformed)
	if code != 1 {
		t.Fatalf("malformed YAML: exit %d\n%s", code, errOut)
	}
	want := "deltasync: configuration problems:\n  - " + malformed + ": not valid YAML: line 2: did not find expected key\n"
	if errOut != want {
		t.Errorf("malformed YAML reports more than the YAML error:\n%s\nwant:\n%s", errOut, want)
	}

	unknown := writeFile(t, dir, "unknown.yaml", `
catalog:
  url: https://uc.example.com/api/2.1/unity-catalog
  tokenfile: /run/token
tables:
  - include: [main.sales.*]
    mod: warn
concurency: 3
`)
	code, _, errOut = runCLI(t, map[string]string{"DELTASYNC_ALLOW_LOCATION": "ftp://y/**"}, "check-config", "--config", unknown, "--mode", "bogus")
	if code != 1 {
		t.Fatalf("unknown keys: exit %d\n%s", code, errOut)
	}
	for _, w := range []string{
		unknown + ": catalog.tokenfile: unknown key (did you mean catalog.token_file?)",
		unknown + ": tables[0].mod: unknown key (did you mean tables[0].mode?)",
		unknown + ": concurency: unknown key (did you mean concurrency?)",
		`--mode "bogus": want sync or warn`,
		`DELTASYNC_ALLOW_LOCATION "ftp://y/**": scheme "ftp" is not supported`,
	} {
		if !strings.Contains(errOut, "  - "+w+"\n") {
			t.Errorf("missing problem %q in:\n%s", w, errOut)
		}
	}
	for _, not := range []string{"tables[0]: mode", `unknown field`, "catalog.url: required", "tables: at least one"} {
		if strings.Contains(errOut, not) {
			t.Errorf("reports %q:\n%s", not, errOut)
		}
	}

	typed := writeFile(t, dir, "typed.yaml", "catalog: {url: https://uc.example.com/api/2.1/unity-catalog, timeout: soon}\n"+
		"tables: [{include: [a.b.c]}]\nconcurrency: four\n")
	code, _, errOut = runCLI(t, map[string]string{"DELTASYNC_SHARD": "3/3"}, "check-config", "--config", typed)
	for _, w := range []string{
		typed + ": catalog.timeout: time: invalid duration \"soon\"",
		typed + ": concurrency: want a whole number, got string",
		`DELTASYNC_SHARD "3/3": want i/N with N >= 1 and 0 <= i < N`,
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("missing problem %q in:\n%s", w, errOut)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// Each subcommand's help lists only the flags it acts on.
func TestHelpListsOnlyFlagsTheCommandUses(t *testing.T) {
	for _, tc := range []struct {
		cmd      string
		has, not []string
	}{
		{"plan", []string{"--include", "--output", "--allow-empty", "--timeout", "--allow-location"},
			[]string{"--max-cycle-duration", "--listen", "--schedule", "--http-token-file", "--heartbeat-url", "--pushgateway-url"}},
		{"once", []string{"--output", "--allow-empty", "--timeout", "--heartbeat-url", "--pushgateway-url"},
			[]string{"--listen", "--schedule", "--http-token-file"}},
		{"run", []string{"--listen", "--schedule", "--http-token-file", "--heartbeat-url", "--max-cycle-duration"},
			[]string{"--output", "--pushgateway-url", "--allow-empty", "--timeout"}},
		{"check-config", []string{"--listen", "--schedule"}, []string{"--output", "--allow-empty"}},
		{"inspect", []string{"--output"}, []string{"--catalog-url", "--listen"}},
	} {
		code, out, errOut := runCLI(t, nil, tc.cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d\n%s", tc.cmd, code, errOut)
		}
		for _, f := range tc.has {
			if !strings.Contains(out, f+" ") {
				t.Errorf("%s --help lacks %s", tc.cmd, f)
			}
		}
		for _, f := range tc.not {
			if strings.Contains(out, f+" ") {
				t.Errorf("%s --help lists %s, which it does not use", tc.cmd, f)
			}
		}
	}
	if code, _, errOut := runCLI(t, nil, "plan", "--listen", ":1"); code != 1 || !strings.Contains(errOut, "unknown flag: --listen") {
		t.Errorf("plan --listen: exit %d, %s", code, errOut)
	}
}

func TestInspectWording(t *testing.T) {
	code, _, errOut := runCLI(t, nil, "inspect", "-o", "yaml", filepath.Join(testcorpus.Dir(t), "checkpoint"))
	if code != 1 || errOut != "deltasync: inspect: -o \"yaml\": want text or json\n" {
		t.Errorf("-o yaml: exit %d (README: 0 or 1), %q", code, errOut)
	}
	logDir := filepath.Join(testcorpus.Dir(t), "checkpoint", "_delta_log")
	code, _, errOut = runCLI(t, nil, "inspect", logDir)
	want := logDir + " names the _delta_log directory itself; pass the table's root, the directory that contains it: " +
		filepath.Join(testcorpus.Dir(t), "checkpoint") + "/\n"
	if code != 1 || !strings.HasSuffix(errOut, want) {
		t.Errorf("inspect …/_delta_log: exit %d\n%s\nwant suffix %q", code, errOut, want)
	}
}

// A table rule that selects nothing is a typo until said otherwise.
func TestEmptySelectionFailsLoudly(t *testing.T) {
	tc := newTestCatalog(t)
	tc.register("basic_partitioned", "t")
	base := []string{"plan", "--catalog-url", tc.srv.URL(), "--log-level", "error", "--allow-location", allowTemp()}

	code, out, errOut := runCLI(t, nil, append(base, "--include", "cat.s")...)
	if code != 1 {
		t.Errorf("--include 'cat.s': exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	want := "deltasync: WARNING: --include 'cat.s' selected no table: check the catalog, schema and table names " +
		"('cat.s' is read as schema.table in any catalog; every table of catalog cat, schema s is 'cat.s.*')\n" +
		"deltasync: exiting 1 because a table rule selected nothing; pass --allow-empty if that is expected\n"
	if errOut != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
	if code, _, errOut := runCLI(t, nil, append(base, "--include", "cat.s", "--allow-empty")...); code != 0 || !strings.Contains(errOut, "WARNING") {
		t.Errorf("--allow-empty: exit %d, want 0 with the warning\n%s", code, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{"DELTASYNC_ALLOW_EMPTY": "true"}, append(base, "--include", "cat.s")...); code != 0 {
		t.Errorf("DELTASYNC_ALLOW_EMPTY=true: exit %d, want 0\n%s", code, errOut)
	}
	cfg := writeFile(t, t.TempDir(), "c.yaml", "tables:\n  - include: [cat.s.*]\n  - include: [typo.s.*]\n    mode: warn\n")
	code, _, errOut = runCLI(t, nil, append(base, "--config", cfg)...)
	if code != 1 || !strings.Contains(errOut, "WARNING: "+cfg+": tables[1] (include 'typo.s.*') selected no table") ||
		strings.Contains(errOut, "tables[0]") {
		t.Errorf("config rule matching nothing: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runCLI(t, nil, append(base, "--include", "cat.s.*")...); code != 0 || errOut != "" {
		t.Errorf("matching rule: exit %d, stderr %q", code, errOut)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// demo --serve keeps the catalog and tables up, prints the run command that
// points at them, keeps making drift, and removes everything on Ctrl-C.
func TestDemoServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"demo", "--serve", "--drift-every", "300ms"}, nil, out, io.Discard) }()

	cmdRE := regexp.MustCompile(`(?m)^  deltasync run --config (\S+)$`)
	var cfgPath string
	for deadline := time.Now().Add(30 * time.Second); cfgPath == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := cmdRE.FindStringSubmatch(out.String()); m != nil {
			cfgPath = m[1]
		}
	}
	if cfgPath == "" {
		t.Fatalf("no run command printed:\n%s", out)
	}
	for _, w := range []string{"2 would update, 1 flagged", "/metrics for the metrics", "watch the daemon sync it"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("demo --serve output lacks %q:\n%s", w, out)
		}
	}
	// The printed command's config reaches the live catalog: once syncs the
	// external tables (the managed one stays flagged: exit 2).
	code, onceOut, errOut := runCLI(t, nil, "once", "--config", cfgPath, "--log-level", "error")
	if code != 2 || !strings.Contains(onceOut, "synced") {
		t.Fatalf("once against demo --serve: exit %d\n%s\n%s", code, onceOut, errOut)
	}
	// The writer keeps moving: a later plan finds new drift.
	drifted := false
	for deadline := time.Now().Add(20 * time.Second); !drifted && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, planOut, _ := runCLI(t, nil, "plan", "--config", cfgPath, "--log-level", "error")
		drifted = strings.Contains(planOut, "would update [OutOfSync]")
	}
	if !drifted {
		t.Errorf("no live drift after once; demo output:\n%s", out)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	writes := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), "a writer ") {
			writes++
		}
	}
	if writes == 0 {
		t.Errorf("no live writes printed:\n%s", out)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("demo --serve exit %d after Ctrl-C", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("demo --serve did not stop on cancel")
	}
	if _, err := os.Stat(filepath.Dir(cfgPath)); !os.IsNotExist(err) {
		t.Errorf("demo directory %s left behind (stat: %v)", filepath.Dir(cfgPath), err)
	}
}
