package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/catalog/uc"
	"github.com/deltasync/deltasync/catalog/uctest/spectest"
	"github.com/deltasync/deltasync/internal/hostile"
	"github.com/deltasync/deltasync/internal/testenv"
)

// The isolation property of issue 21: one `deltasync once` over 200 healthy
// tables that all need a sync and, among them, one table for every hostile
// input of internal/hostile (lying checkpoint footers, decompression bombs,
// strings that are not UTF-8, commits and hints hundreds of MiB long). Every
// healthy table must be synced, every hostile one flagged or failed with a
// reason naming its file and its record left untouched, and the process
// must stay under a stated memory bound: measured (peak RSS), under
// `ulimit -v`, and inside a memory cgroup. The binary is built without the
// race detector, whose shadow memory no address-space limit could hold.

const (
	isolationHealthy = 200
	// isolationRSSBound is the peak RSS the plain run must stay under
	// (measured: 60 MiB).
	isolationRSSBound = 128 << 20
	// isolationVMLimitKiB is the `ulimit -v` of the constrained run (KiB,
	// as ulimit takes it). The Go runtime alone reserves about 1 GiB of
	// address space at start (the binary does not start under 800 MiB), so
	// 2 GiB leaves less than the 1 GiB one bomb would inflate to.
	isolationVMLimitKiB = 2 << 20
	// isolationCgroupLimit is the memory cgroup's limit_in_bytes.
	isolationCgroupLimit = 256 << 20
)

// isolationCaseRSS is how much more than one healthy table's run a run
// over one hostile table may peak at.
const isolationCaseRSS = 64 << 20

// isolationName is the catalog name of a hostile case's table.
func isolationName(c hostile.Case) string {
	return "main.bad." + strings.ToLower(strings.ReplaceAll(c.Name, "-", "_"))
}

// hostileRow appends one row of the hostile-input table as JSON to
// $DELTASYNC_RELIABILITY_OUT (when set); .ci/reliability.sh renders it.
func hostileRow(t *testing.T, c hostile.Case, peakRSS int64, result string) {
	t.Helper()
	out := os.Getenv("DELTASYNC_RELIABILITY_OUT")
	if out == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"hostile": c.Input, "bound": c.Bound, "result": result, "peak_rss_mib": peakRSS >> 20})
	fh, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// isolationSchema returns a two- or three-column Delta schema string.
func isolationSchema(extra string) string {
	fields := []string{
		`{"name":"id","type":"long","nullable":true,"metadata":{}}`,
		`{"name":"name","type":"string","nullable":true,"metadata":{}}`,
	}
	if extra != "" {
		fields = append(fields, `{"name":"`+extra+`","type":"integer","nullable":true,"metadata":{}}`)
	}
	return `{"type":"struct","fields":[` + strings.Join(fields, ",") + `]}`
}

// isolationCommit is a commit with protocol (version 0) and metaData.
func isolationCommit(id, schema string, ts int64, withProtocol bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"commitInfo":{"timestamp":%d,"operation":"WRITE"}}`+"\n", ts)
	if withProtocol {
		b.WriteString(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n")
	}
	md, _ := json.Marshal(map[string]any{
		"id": id, "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
		"schemaString": schema, "partitionColumns": []string{}, "configuration": map[string]string{},
		"createdTime": ts,
	})
	b.WriteString(`{"metaData":` + string(md) + "}\n")
	return b.Bytes()
}

func isoWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// isolationFleet is the catalog and tables of one isolation run.
type isolationFleet struct {
	url     string
	client  *uc.Client
	config  string
	healthy []string          // full names
	bad     map[string]string // full name -> the file its error must name
	etags   map[string]string // bad table -> etag before the run
	cases   map[string]hostile.Case
}

// newIsolationFleet registers the healthy tables (each then gains a column
// in the log) and the hostile ones (registered from a healthy version 0,
// then replaced by the hostile files), with the hostile tables' files
// hard-linked from built so that the big ones are written once.
func newIsolationFleet(t *testing.T, built map[string]map[string]string, cases []hostile.Case, healthy int) *isolationFleet {
	t.Helper()
	ctx := t.Context()
	srv := spectest.NewForTest(t)
	srv.AddSchema("main", "good")
	srv.AddSchema("main", "bad")
	client, err := uc.New(srv.URL(), uc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	f := &isolationFleet{url: srv.URL(), client: client, bad: map[string]string{}, etags: map[string]string{}, cases: map[string]hostile.Case{}}
	for i := range healthy {
		name := fmt.Sprintf("main.good.t%03d", i)
		dir := filepath.Join(root, "good", fmt.Sprintf("t%03d", i))
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		isoWrite(t, filepath.Join(dir, "_delta_log", "00000000000000000000.json"),
			isolationCommit(id, isolationSchema(""), 1700000000000+int64(i), true))
		registerLog(ctx, t, client, name, dir)
		isoWrite(t, filepath.Join(dir, "_delta_log", "00000000000000000001.json"),
			isolationCommit(id, isolationSchema(fmt.Sprintf("added_%d", i)), 1700000100000+int64(i), false))
		f.healthy = append(f.healthy, name)
	}
	for _, c := range cases {
		name := isolationName(c)
		dir := filepath.Join(root, "bad", c.Name)
		isoWrite(t, filepath.Join(dir, "_delta_log", "00000000000000000000.json"),
			isolationCommit("11111111-2222-3333-4444-555555555555", isolationSchema(""), 1690000000000, true))
		registerLog(ctx, t, client, name, dir)
		for key, src := range built[c.Name] {
			dst := filepath.Join(dir, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(dst)
			if err := os.Link(src, dst); err != nil {
				t.Fatal(err)
			}
		}
		f.cases[name] = c
		if c.Want != hostile.Loads {
			f.bad[name] = c.File
			f.etags[name] = f.etag(t, name)
		}
	}
	f.config = filepath.Join(root, "deltasync.yaml")
	cfg := "tables:\n  - include: [\"main.*.*\"]\n    mode: sync\n" +
		"storage:\n  allowed_locations: [\"file://" + filepath.ToSlash(root) + "/**\"]\n" +
		"log:\n  format: json\n  level: warn\n"
	isoWrite(t, f.config, []byte(cfg))
	return f
}

func (f *isolationFleet) etag(t *testing.T, name string) string {
	t.Helper()
	n, err := catalog.ParseTableName(name)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.client.LoadTable(t.Context(), n)
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return rec.Metadata.Etag
}

// buildHostile writes every hostile case once under dir and returns, per
// case, the path of each of its files by key.
func buildHostile(t *testing.T, dir string, cases []hostile.Case) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, c := range cases {
		tbl, err := c.Build()
		if err != nil {
			t.Fatalf("building hostile case %s: %v", c.Name, err)
		}
		paths := map[string]string{}
		for key, data := range tbl {
			p := filepath.Join(dir, c.Name, filepath.FromSlash(key))
			isoWrite(t, p, data)
			paths[key] = p
		}
		out[c.Name] = paths
	}
	return out
}

// isolationBinary builds deltasync without the race detector.
func isolationBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deltasync")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// gnuTime returns the path of GNU time (Debian's package time); without it
// the test skips, or fails when DELTASYNC_REQUIRE_EXTERNAL=1.
func gnuTime(t *testing.T) string {
	t.Helper()
	const p = "/usr/bin/time"
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, testenv.External, "GNU time is missing (apt-get install time): "+err.Error())
	}
	return p
}

// isolationRun is what one constrained `deltasync once` did.
type isolationRun struct {
	code    int
	peakRSS int64 // bytes
	report  struct {
		Tables []struct {
			Table   string `json:"table"`
			Outcome string `json:"outcome"`
			Status  string `json:"sync_status"`
			Reason  string `json:"reason"`
		} `json:"tables"`
		Summary map[string]int `json:"summary"`
	}
	stderr string
}

// runOnce runs `deltasync once -o json` through sh -c, with prefix (shell
// commands such as a ulimit) before the exec.
func runOnce(t *testing.T, bin string, f *isolationFleet, prefix string, args ...string) isolationRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// GNU time reports the peak RSS of its own child, forked from a small
	// process: this process's RSS, which a child exec'd from it inherits
	// in ru_maxrss, does not leak into the figure.
	rssFile := filepath.Join(t.TempDir(), "maxrss")
	script := prefix + `c=$1 u=$2 m=$3; shift 3; exec ` + gnuTime(t) + ` -f %M -o "$m" "$0" once -o json --config "$c" --catalog-url "$u" "$@"`
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, bin, f.config, f.url, rssFile}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r isolationRun
	r.stderr = stderr.String()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("deltasync once was killed by %v (%s); stderr:\n%s", ws.Signal(), prefix, tail(r.stderr))
		}
		r.code = exit.ExitCode()
	default:
		t.Fatalf("running deltasync once: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("deltasync once did not end within 3 minutes (%s)", prefix)
	}
	if data, err := os.ReadFile(rssFile); err == nil {
		// The last field: GNU time puts any note about the child first.
		if f := strings.Fields(string(data)); len(f) > 0 {
			if kib, err := strconv.ParseInt(f[len(f)-1], 10, 64); err == nil {
				r.peakRSS = kib << 10
			}
		}
	}
	if r.peakRSS == 0 {
		t.Fatalf("no peak RSS from GNU time in %s", rssFile)
	}
	if err := json.Unmarshal(stdout.Bytes(), &r.report); err != nil {
		t.Fatalf("once -o json printed no report (%v), exit %d; stderr:\n%s", err, r.code, tail(r.stderr))
	}
	return r
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// check asserts the isolation property on one run's report and the catalog.
func (f *isolationFleet) check(t *testing.T, r isolationRun) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (hostile tables flagged); stderr:\n%s", r.code, tail(r.stderr))
	}
	got := map[string]int{}
	for i, res := range r.report.Tables {
		got[res.Table] = i
	}
	for _, name := range f.healthy {
		i, ok := got[name]
		if !ok {
			t.Errorf("%s: not in the report", name)
			continue
		}
		if res := r.report.Tables[i]; res.Outcome != "synced" {
			t.Errorf("%s: outcome %q (%s), want synced", name, res.Outcome, res.Reason)
		}
	}
	for name, file := range f.bad {
		i, ok := got[name]
		if !ok {
			t.Errorf("%s: not in the report", name)
			continue
		}
		res := r.report.Tables[i]
		if res.Outcome != "flagged" || !strings.Contains(res.Reason, file) {
			t.Errorf("%s (%s): outcome %q reason %q, want flagged naming %s", name, f.cases[name].Input, res.Outcome, res.Reason, filepath.Base(file))
		}
		if e := f.etag(t, name); e != f.etags[name] {
			t.Errorf("%s: its record was written (etag %s -> %s)", name, f.etags[name], e)
		}
	}
	for name, c := range f.cases {
		if c.Want != hostile.Loads {
			continue
		}
		i, ok := got[name]
		if !ok {
			t.Errorf("%s (%s): not in the report", name, c.Input)
		} else if res := r.report.Tables[i]; res.Status != "Synced" {
			t.Errorf("%s (%s): not in sync after the run: %+v", name, c.Input, res)
		}
	}
	// Every healthy record holds its new column: the report is not enough.
	for i, name := range f.healthy {
		n, _ := catalog.ParseTableName(name)
		rec, err := f.client.LoadTable(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, c := range rec.Metadata.Columns.Fields {
			cols = append(cols, c.Name)
		}
		if want := fmt.Sprintf("added_%d", i); !slices.Contains(cols, want) {
			t.Errorf("%s: record columns %v lack %s", name, cols, want)
		}
	}
}

func TestIsolation(t *testing.T) {
	testenv.Suite(t) // builds the binary and 300 MiB of hostile tables
	var cases []hostile.Case
	for _, c := range hostile.Cases(false) {
		if c.MaxLoadBytes == 0 { // the budget cases need a budget of their own
			cases = append(cases, c)
		}
	}
	built := buildHostile(t, t.TempDir(), cases)
	bin := isolationBinary(t)

	// Each hostile table alone first: its outcome and the process's peak
	// RSS, the rows of RELIABILITY.md's hostile-input table.
	t.Run("each", func(t *testing.T) {
		f := newIsolationFleet(t, built, cases, 1)
		base := runOnce(t, bin, f, "", "--include", f.healthy[0])
		for _, c := range cases {
			name := isolationName(c)
			r := runOnce(t, bin, f, "", "--include", name)
			var res string
			if len(r.report.Tables) == 1 {
				res = r.report.Tables[0].Outcome
				if why := r.report.Tables[0].Reason; why != "" {
					res += ": " + why[strings.LastIndex(why, "): ")+3:]
				}
			}
			t.Logf("%s: exit %d, peak RSS %d MiB (one healthy table alone: %d MiB), %s", c.Name, r.code, r.peakRSS>>20, base.peakRSS>>20, res)
			hostileRow(t, c, r.peakRSS, res)
			if r.peakRSS > base.peakRSS+isolationCaseRSS {
				t.Errorf("%s: peak RSS %d MiB, more than %d MiB over one healthy table's %d MiB", c.Name, r.peakRSS>>20, isolationCaseRSS>>20, base.peakRSS>>20)
			}
		}
	})
	t.Run("measured", func(t *testing.T) {
		f := newIsolationFleet(t, built, cases, isolationHealthy)
		r := runOnce(t, bin, f, "")
		f.check(t, r)
		t.Logf("peak RSS %d MiB over %d healthy and %d hostile tables", r.peakRSS>>20, len(f.healthy), len(cases))
		if r.peakRSS > isolationRSSBound {
			t.Errorf("peak RSS %d MiB, want at most %d MiB", r.peakRSS>>20, isolationRSSBound>>20)
		}
	})
	t.Run("ulimit-v", func(t *testing.T) {
		f := newIsolationFleet(t, built, cases, isolationHealthy)
		f.check(t, runOnce(t, bin, f, "ulimit -v "+strconv.Itoa(isolationVMLimitKiB)+" || exit 97; "))
	})
	t.Run("cgroup", func(t *testing.T) {
		cg := memoryCgroup(t, isolationCgroupLimit)
		f := newIsolationFleet(t, built, cases, isolationHealthy)
		r := runOnce(t, bin, f, "echo $$ > "+filepath.Join(cg, "cgroup.procs")+" || exit 98; ")
		f.check(t, r)
		if data, err := os.ReadFile(filepath.Join(cg, "memory.failcnt")); err == nil {
			t.Logf("cgroup %s: limit %d MiB, failcnt %s", cg, isolationCgroupLimit>>20, strings.TrimSpace(string(data)))
		}
	})
}

// memoryCgroup creates a memory cgroup limited to limit bytes (cgroup v2
// under /sys/fs/cgroup, or v1's memory hierarchy) and returns its directory;
// it is removed at cleanup. Without a writable cgroup file system the test
// skips, or fails when DELTASYNC_REQUIRE_EXTERNAL=1 (testenv.Missing).
func memoryCgroup(t *testing.T, limit int64) string {
	t.Helper()
	name := fmt.Sprintf("deltasync-isolation-%d", os.Getpid())
	try := []struct{ dir, file string }{
		{"/sys/fs/cgroup", "memory.max"},                   // v2, unified at the root
		{"/sys/fs/cgroup/memory", "memory.limit_in_bytes"}, // v1
	}
	var errs []error
	for _, c := range try {
		if _, err := os.Stat(filepath.Join(c.dir, "cgroup.procs")); err != nil {
			continue
		}
		if c.file == "memory.max" {
			if ctl, err := os.ReadFile(filepath.Join(c.dir, "cgroup.controllers")); err != nil || !strings.Contains(string(ctl), "memory") {
				continue
			}
		}
		dir := filepath.Join(c.dir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		t.Cleanup(func() { _ = os.Remove(dir) })
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		// Without swap accounting a v1 group could swap instead; limit it too.
		_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0o644)
		return dir
	}
	testenv.Missing(t, testenv.External, fmt.Sprintf("no writable memory cgroup (%v)", errors.Join(errs...)))
	return ""
}
